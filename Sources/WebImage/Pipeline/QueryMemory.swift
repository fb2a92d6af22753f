import Foundation

/// Stage 1, the memory cache: asked by the caller itself, before any shared work (a hit of the
/// library's own cache costs no hop and no task).
extension ImageManager {
    /// The memory hit for a call, or nil. With `.queryMemoryData` the hit's data is
    /// read from disk too. Decode options are part of what a hit must match: a first-frame call
    /// on an animated hit gets a still.
    /// Inlined into the caller: on the hot path every async call level costs its own frame.
    @inline(__always)
    func queryMemory(_ request: LoadRequest) async -> ImageResult? {
        guard let key = request.cacheKey else { return nil }
        let options = request.options
        let wantsData = options.contains(.queryMemoryData)
        let query = ImageCacheQuery(scope: wantsData ? request.queryType : .memory, options: request.decodeOptions,
                                    includingData: wantsData)
        let found: ImageCacheResult?
        if !wantsData, let cache = request.settings.imageCache {
            // The library's own cache: read its memory without a hop (the hot path).
            found = cache.memory.cachedImage(forKey: key).map { ImageCacheResult(image: $0, data: nil, cacheType: .memory) }
        } else {
            found = await request.cache.image(forKey: key, query: query)
        }
        guard var hit = found else { return nil }
        if options.contains(.retryFailed) { failedURLs.remove(request.url) }
        hit.image = hit.image.matching(request.decodeOptions)
        return ImageResult(hit, url: request.url)
    }
}

/// The plain memory hit: the usual call (no context of its own, no option that changes what a
/// hit is) on a manager whose defaults key images by their URL, answered from the library's own
/// memory cache before any request is built. It gives what the whole path gives for such a call
/// (the same checks, metrics and events); anything else, a miss included, takes the whole path.
struct PlainMemoryHit: Sendable {
    /// Options that change a memory hit: any of them takes the whole path.
    static let reshapingOptions: ImageOptions = [.fromLoaderOnly, .refreshCached, .queryMemoryData, .retryFailed, .decodeFirstFrameOnly]

    /// The cache whose memory is read.
    let cache: ImageCache

    /// The fast path of a manager with `configuration` whose default context decides `settings`;
    /// nil when its defaults make a hit anything but the image under the URL's own key.
    init?(_ configuration: ImageManager.Configuration, settings: LoadRequest.Settings) {
        guard configuration.optionsProcessor == nil, configuration.defaultOptions.isDisjoint(with: Self.reshapingOptions),
              settings.keyFilter == nil, !settings.reducesDecode, settings.transformerKey == nil,
              settings.queryType.includesMemory, let cache = settings.imageCache else { return nil }
        self.cache = cache
    }
}

/// What a plain call can do before it builds a request: take a memory hit, or join the work a
/// plain call of its URL has in flight.
enum PlainShortcut {
    /// The image, from the memory cache.
    case hit(Image)
    /// The call joined `work` as subscriber `id`; `request` is the one the call would have made.
    case joined(SharedWork<ImageEvent, SharedResult>, id: Int, LoadRequest)
}

extension ImageManager {
    /// The plain memory hit for this call, or the plain work in flight for its URL (joined),
    /// or nil (take the whole path). One step for both: the URL's string and the blacklist are
    /// read once (the scheme only for a hit), and a joining caller waits in its own function's
    /// frame, one async level fewer (about 1,000 instructions of a joining caller, counted under
    /// callgrind). A miss that joins nothing takes the whole path, which looks in memory and in
    /// the table again: a second look-up of each, small beside a load.
    /// Not inlined: its temporaries would enlarge the frame of every async caller (see `succeeded`).
    @inline(never)
    func plainShortcut(_ url: URL, options: ImageOptions, context: ImageContext) -> PlainShortcut? {
        guard let plainHit, context.isEmpty, options.isDisjoint(with: PlainMemoryHit.reshapingOptions),
              !failedURLs.contains(url) else { return nil }
        let key = url.absoluteString
        if let image = plainHit.cache.memory.cachedImage(forKey: key) {
            // What the whole path would refuse (a cancelled call, a key that is not a URL) takes it.
            guard !Task.isCancelled, URLScheme.isPresent(in: key) else { return nil }
            succeeded(url, .memory)
            return .hit(image)
        }
        // A plain work of this very URL string was made by a call that passed every check of
        // `makeRequest` (its scheme among them); a cancelled caller leaves in `wait`, as it would
        // after joining. A call with a time limit waits in `load`, which keeps it.
        guard options.isEmpty, defaultLoadTimeout == nil, !pipeline.works.isEmpty,
              let (work, id, workKey) = pipeline.works.joinPlain(key, priority: { $0.request.callerPriority }, onEvent: nil)
        else { return nil }
        followPriority(of: workKey.request, in: work, id: id)
        pipeline.spans.joined(work)
        return .joined(work, id: id, workKey.request)
    }

    /// The wait of a plain call that joined `work` (see `plainShortcut`), with its bookkeeping.
    /// Inlined, and on the caller's executor: no async level and no hop of its own.
    @inline(__always)
    nonisolated(nonsending) func waitJoined(_ url: URL, _ work: SharedWork<ImageEvent, SharedResult>, id: Int,
                                            _ request: LoadRequest) async throws -> SharedResult {
        let shared: SharedResult
        do { shared = try await work.wait(id) } catch { throw joinedPlain(url, request, failed: error) }
        return joinedPlain(url, succeeded: shared)
    }

    /// A joined plain call's result arrived: the pickup and the counts, as `load` keeps them (a
    /// plain call has no `.retryFailed`: the blacklist has nothing to undo).
    @inline(never)
    func joinedPlain(_ url: URL, succeeded shared: SharedResult) -> SharedResult {
        shared.pickedUp()
        succeeded(url, shared.result.cacheType)
        return shared
    }

    /// A joined plain call failed with `error`: the blacklist and the counts, as `load` keeps them.
    @inline(never)
    func joinedPlain(_ url: URL, _ request: LoadRequest, failed error: any Error) -> any Error {
        blockIfPermanent(request, error)
        failed(url, error)
        return error
    }
}

/// Whether a URL string starts with a scheme (RFC 3986: a letter, then letters, digits, `+`,
/// `-` or `.`, then `:`), without asking Foundation's URL to parse it out.
enum URLScheme {
    static func isPresent(in string: String) -> Bool {
        // A native string scans its bytes in place (the iterator cost about 40 instructions a
        // byte, counted under callgrind); any other is copied once. Not generic: the generic
        // scan was not specialized and cost about 400 instructions a call.
        string.utf8.withContiguousStorageIfAvailable(startsWithScheme)
            ?? Array(string.utf8).withUnsafeBufferPointer(startsWithScheme)
    }

    private static func startsWithScheme(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // Plain comparisons: the range patterns of a `switch` cost about 25 instructions a byte.
        guard let first = bytes.first, (first | 0x20) &- UInt8(ascii: "a") < 26 else { return false }
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: ":") { return true }
            let isSchemeByte = (byte | 0x20) &- UInt8(ascii: "a") < 26 || byte &- UInt8(ascii: "0") < 10
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            if !isSchemeByte { return false }
        }
        return false
    }
}

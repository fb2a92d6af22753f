import Foundation
import Logging
import Synchronization

/// The shared part of a load, after the memory cache missed: disk cache, download, decode,
/// transform, store. Runs once per work key however many callers wait for it.
struct ImagePipeline: Sendable {
    /// Decode-transform-store works, by work key.
    let works = InFlightTable<LoadPlan.WorkKey, ImageEvent, SharedResult>()
    /// Transfers, by download key.
    let downloads = InFlightTable<LoadPlan.DownloadKey, DownloadEvent, Download>()
    let shouldDownload: (@Sendable (URL) -> Bool)?
    /// Disk writes running in the background, so that they can be awaited.
    let pendingStores = PendingStores()
    static let logger = Logger(label: "WebImage.ImageManager")

    /// The body of a finished transfer.
    struct Download: Sendable {
        var data: Data
        var response: ImageLoaderResponse
    }

    /// What a shared transfer reports to the works that wait for it.
    enum DownloadEvent: Sendable {
        case progress(ImageProgress)
        case data(Data)
    }

    func run(_ plan: LoadPlan, onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> SharedResult {
        try await works.run(plan.workKey, onEvent: onEvent) { work in
            try await load(plan, work: work)
        }
    }

    func cancelAll() {
        works.cancelAll()
        downloads.cancelAll()
    }

    func counts() -> (loads: Int, downloads: Int) { (works.count, downloads.count) }

    // MARK: - Stages

    private func load(_ plan: LoadPlan, work: SharedWork<ImageEvent, SharedResult>) async throws -> SharedResult {
        let options = plan.options
        var cached: ImageCacheResult?
        // Disk (the caller already looked in memory).
        if let key = plan.cacheKey, !options.contains(.fromLoaderOnly) {
            try Task.checkCancellation()
            let scope: ImageCacheType = options.contains(.refreshCached) ? plan.queryType
                : (plan.queryType.includesDisk ? .disk : .none)
            if scope != .none {
                cached = await plan.cache.image(forKey: key, from: scope, options: plan.decodeOptions,
                                                includingData: options.contains(.queryMemoryData), promotingTo: plan.memoryStoreType)
            }
            if let cached, !options.contains(.refreshCached) {
                return SharedResult(ImageResult(cached, url: plan.url))
            }
            if cached == nil, !options.contains(.refreshCached), let result = try await fromCachedOriginal(plan) {
                return SharedResult(result)
            }
        }
        if options.contains(.fromCacheOnly) {
            if let cached { return SharedResult(ImageResult(cached, url: plan.url)) }
            throw ImageError.notInCache(key: plan.cacheKey ?? plan.url.absoluteString)
        }
        if let shouldDownload, !shouldDownload(plan.url) {
            if let cached { return SharedResult(ImageResult(cached, url: plan.url)) }
            throw ImageError.downloadNotAllowed(plan.url)
        }
        try Task.checkCancellation()
        // Refreshing: the callers watching events see the cached image before the network answers.
        if let cached, options.contains(.refreshCached) { work.send(.cached(ImageResult(cached, url: plan.url))) }

        // Download (shared), with previews when asked.
        let validators: CacheValidators?
        if cached != nil, let key = plan.cacheKey, let stored = await plan.cache.extendedData(forKey: key) {
            validators = CacheValidators(stored: stored)
        } else {
            validators = nil
        }
        let progressive = options.contains(.progressiveLoad) && !options.contains(.avoidDecodeImage)
        let (download, incremental) = try await fetch(plan, validators: validators, progressive: progressive, work: work)
        if download.response.statusCode == 304, let cached {
            return SharedResult(ImageResult(cached, url: plan.url))
        }
        guard download.response.statusCode != 304 else { throw ImageError.badStatusCode(304, url: plan.url) }
        guard !download.data.isEmpty else { throw ImageError.decodingFailed(.emptyData, source: plan.url.absoluteString, byteCount: 0) }

        // Decode (a failure names the URL and the byte count), transform.
        try Task.checkCancellation()
        let original: Image
        do { original = try decode(download.data, plan: plan, incremental: incremental) } catch let error as ImageError {
            switch error {
            case .emptyData, .unsupportedFormat, .undecodable, .tooLarge:
                throw ImageError.decodingFailed(error, source: plan.url.absoluteString, byteCount: download.data.count)
            default: throw error
            }
        }
        try Task.checkCancellation()
        let image = try transform(original, plan: plan)
        // Every caller may have left while the transform ran: then nothing of it is stored.
        try Task.checkCancellation()
        let derived = plan.isDerived && !(image.isAnimated && !options.contains(.transformAnimatedImage) && plan.context.thumbnailPixelSize == nil)

        // The callers get the image now (unless they wait for the store); the work stays in the
        // table until the memory store is done, so a caller arriving meanwhile joins it.
        let result = SharedResult(ImageResult(image: image, data: derived ? nil : download.data, cacheType: .none, url: plan.url))
        // The background disk write is registered before any caller is resumed, so that a
        // `waitForPendingStores()` called as soon as the load returns waits for it (even while
        // a slow memory store still runs before the write starts).
        let reservation = options.contains(.waitStoreCache) ? nil : pendingStores.reserve()
        if !options.contains(.waitStoreCache) { work.deliver(result) }
        await store(plan, original: original, image: image, data: download.data, derived: derived,
                    validators: CacheValidators(headers: download.response.headers), reservation: reservation)
        return result
    }

    /// A transformed or thumbnail image that is not cached, made from the cached original
    /// (when `originalQueryCacheType` asks to look for it).
    private func fromCachedOriginal(_ plan: LoadPlan) async throws -> ImageResult? {
        guard plan.isDerived, plan.originalQueryType != .none, let originalKey = plan.originalKey else { return nil }
        var fullSize = plan.decodeOptions
        fullSize.maxPixelSize = nil
        // The original is promoted only as its own store type allows (disk by default): a
        // thumbnail or transformed load never puts the full-size image in memory.
        guard let hit = await plan.cache.image(forKey: originalKey, from: plan.originalQueryType, options: fullSize,
                                               includingData: false, promotingTo: plan.originalStoreType) else { return nil }
        try Task.checkCancellation()
        let image = try transform(thumbnail(hit.image, plan: plan), plan: plan)
        await store(plan, original: hit.image, image: image, data: nil, derived: true, validators: nil, storesOriginal: false)
        return ImageResult(image: image, data: nil, cacheType: hit.cacheType, url: plan.url)
    }

    // MARK: Download

    private func fetch(_ plan: LoadPlan, validators: CacheValidators?, progressive: Bool,
                       work: SharedWork<ImageEvent, SharedResult>) async throws -> (Download, (any IncrementalImageDecoder)?) {
        let request = plan.loaderRequest(validators: validators)
        let loader = plan.loader
        let body: @Sendable (SharedWork<DownloadEvent, Download>) async throws -> Download = { transfer in
            try await ImagePipeline.transfer(request, loader: loader, streaming: transfer.hasEventSubscribers, transfer: transfer)
        }
        guard progressive || work.hasEventSubscribers else {
            return (try await downloads.run(plan.downloadKey, onEvent: nil, body: body), nil)
        }
        if !progressive {
            let download = try await downloads.run(plan.downloadKey, replaysEvents: true, onEvent: { event in
                if case .progress(let progress) = event { work.send(.progress(progress)) }
            }, body: body)
            return (download, nil)
        }
        let (chunks, feed) = AsyncStream<DownloadEvent>.makeStream()
        let downloads = self.downloads
        return try await withThrowingTaskGroup(of: Download.self) { group in
            group.addTask {
                defer { feed.finish() }
                return try await downloads.run(plan.downloadKey, replaysEvents: true, onEvent: { feed.yield($0) }, body: body)
            }
            var previewer = Previewer(plan: plan, coders: plan.coders)
            // The loader throttles its progress events; a preview can come before the first
            // one. Each preview is preceded by the byte count it was decoded from, so that
            // progress never lags behind what the previews show.
            // A loader event older than what was already reported is dropped (never backwards).
            var received: Int64 = 0, reported: Int64 = -1, expected: Int64?
            for await event in chunks {
                switch event {
                case .progress(let progress):
                    let known = expected
                    expected = progress.expectedBytes ?? expected
                    guard progress.receivedBytes > reported || (progress.receivedBytes == reported && known != expected) else { continue }
                    reported = progress.receivedBytes
                    work.send(.progress(progress))
                case .data(let chunk):
                    received += Int64(chunk.count)
                    if let preview = previewer.add(chunk) {
                        if received > reported {
                            reported = received
                            work.send(.progress(ImageProgress(receivedBytes: received, expectedBytes: expected)))
                        }
                        let shown = (try? transformPreview(preview, plan: plan)) ?? preview
                        work.send(.preview(shown))
                    }
                }
            }
            let download = try await group.next()!
            return (download, previewer.decoder)
        }
    }

    /// One transfer: streamed (progress and chunks to the subscribers) or in one piece.
    private static func transfer(_ request: ImageLoaderRequest, loader: any ImageLoader, streaming: Bool,
                                 transfer: SharedWork<DownloadEvent, Download>) async throws -> Download {
        if !streaming {
            let (data, response) = try await loader.data(for: request)
            transfer.send(.progress(ImageProgress(receivedBytes: Int64(data.count), expectedBytes: Int64(data.count))))
            return Download(data: data, response: response)
        }
        let (body, response) = try await loader.gatherBody(of: request) { event in
            switch event {
            case .response: break
            case .data(let chunk): transfer.send(.data(chunk))
            case .progress(let progress): transfer.send(.progress(progress))
            }
        }
        return Download(data: body, response: response)
    }

    // MARK: Decode, transform, store

    private func decode(_ data: Data, plan: LoadPlan, incremental: (any IncrementalImageDecoder)?) throws -> Image {
        var image: Image?
        if let incremental { image = try? incremental.finish() }
        if image == nil {
            if let coder = plan.context.coder, coder.canDecode(data) {
                image = try coder.decode(data, options: plan.decodeOptions)
            } else {
                image = try plan.coders.decode(data, options: plan.decodeOptions)
            }
        }
        return try thumbnail(image!, plan: plan)
    }

    /// Fits a still image into the thumbnail box (the decoder already bounded its longer side),
    /// or stretches it to the box when the aspect ratio is not preserved. Never enlarges.
    private func thumbnail(_ image: Image, plan: LoadPlan) throws -> Image {
        guard let box = plan.context.thumbnailPixelSize, box.width > 0, box.height > 0, !image.isAnimated else { return image }
        let (width, height) = (image.width, image.height)
        if plan.context.preserveAspectRatio == false {
            guard box.width < width || box.height < height else { return image }
            let resized = try ResizingTransformer(width: Double(min(box.width, width)), height: Double(min(box.height, height)),
                                                  scaleMode: .fill).transform(image)
            return resized
        }
        let factor = min(Double(box.width) / Double(width), Double(box.height) / Double(height))
        guard factor < 1 else { return image }
        let bitmap = image.bitmap.areaDownscaled(toWidth: max(1, Int((Double(width) * factor).rounded())),
                                                 height: max(1, Int((Double(height) * factor).rounded())))
        return Image(bitmap: bitmap, format: image.format, scale: image.scale)
    }

    private func transform(_ image: Image, plan: LoadPlan) throws -> Image {
        guard let transformer = plan.context.transformer else { return image }
        if image.isAnimated, !plan.options.contains(.transformAnimatedImage) { return image }
        do {
            return try transformer.transform(image)
        } catch let error as ImageError {
            throw error
        } catch {
            throw ImageError.transformFailed("\(transformer.key): \(error)")
        }
    }

    private func transformPreview(_ preview: PartialImage, plan: LoadPlan) throws -> PartialImage {
        guard plan.context.transformer != nil || plan.context.thumbnailPixelSize != nil else { return preview }
        var shown = preview
        shown.image = try transform(thumbnail(preview.image, plan: plan), plan: plan)
        return shown
    }

    /// Stores a loaded image: into memory before the work ends (so that a caller arriving just
    /// after it finds the image), to disk in the background or, with `.waitStoreCache`, before
    /// returning. Failures are logged: the caller still gets the image.
    private func store(_ plan: LoadPlan, original: Image, image: Image, data: Data?, derived: Bool,
                       validators: CacheValidators?, storesOriginal: Bool = true, reservation: PendingStores.Reservation? = nil) async {
        // A reservation not handed to a write is released, whichever way this returns.
        var started = false
        defer { if let reservation, !started { pendingStores.release(reservation) } }
        guard let key = plan.cacheKey else { return }
        let cache = plan.cache, url = plan.url
        let storeType = plan.storeType
        if plan.memoryStoreType.includesMemory {
            do { try await cache.store(image, data: nil, forKey: key, to: .memory) } catch {
                ImagePipeline.logger.warning("could not cache \(url.absoluteString) in memory: \(error)")
            }
        }
        let serializer = plan.context.cacheSerializer
        let originalStoreType = plan.originalStoreType
        let originalKey = plan.originalKey
        let thumbnailed = plan.context.thumbnailPixelSize != nil
        let disk: @Sendable () async -> Void = {
            do {
                if derived, storesOriginal, let originalKey, originalKey != key, originalStoreType != .none {
                    // The full-size original: its data for the disk; its image for memory only when not a thumbnail.
                    let destination: ImageCacheType = thumbnailed
                        ? (originalStoreType.includesDisk ? .disk : .none) : originalStoreType
                    if destination != .none {
                        try await cache.store(thumbnailed ? nil : original, data: data, forKey: originalKey, to: destination)
                    }
                }
                guard storeType.includesDisk else { return }
                var bytes: Data? = derived ? nil : data
                if let serializer {
                    bytes = serializer.serialize(image, derived ? nil : data, url)
                    guard bytes != nil else { return }
                }
                try await cache.store(image, data: bytes, forKey: key, to: .disk)
                if let validators, !derived {
                    await cache.setExtendedData(validators.stored, forKey: key)
                }
            } catch {
                ImagePipeline.logger.warning("could not cache \(url.absoluteString) on disk: \(error)")
            }
        }
        let storesOriginal = derived && storesOriginal && originalKey != key && originalStoreType != .none
        guard storeType.includesDisk || storesOriginal else { return }
        if plan.options.contains(.waitStoreCache) {
            await disk()
        } else {
            pendingStores.start(disk, reservation: reservation)
            started = true
        }
    }
}

/// The result of a shared work, shared by reference among its callers: resuming a thousand
/// callers then costs one reference each, not one per field of the result (the callers run on
/// both cores at once, and every reference count they touch is contended).
final class SharedResult: Sendable {
    let result: ImageResult
    init(_ result: ImageResult) { self.result = result }
}

/// What a load ends with: a memory hit as it is (no allocation on the fast path), or the result
/// of a shared work.
enum LoadOutcome: Sendable {
    case hit(ImageResult)
    case shared(SharedResult)

    var result: ImageResult {
        switch self {
        case .hit(let result): result
        case .shared(let shared): shared.result
        }
    }

    /// The image alone (what `image(for:)` returns: one reference taken, not the whole result copied).
    var image: Image {
        switch self {
        case .hit(let result): result.image
        case .shared(let shared): shared.result.image
        }
    }
}

/// Background disk writes: started without waiting, awaited by `ImageManager.waitForPendingStores()`.
/// A write can be reserved before it starts (before the callers of its load are resumed), so
/// that a wait that begins in between does not miss it.
final class PendingStores: Sendable {
    /// A write announced but not started yet.
    struct Reservation: Sendable { fileprivate let id: Int }

    private struct State {
        var tasks: [Int: Task<Void, Never>] = [:]
        var reserved: Set<Int> = []
        /// Waits for reservations to start or go.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    private let nextID = Atomic<Int>(0)

    /// Announces a write that will start soon; `waitForAll` waits for it from now on.
    func reserve() -> Reservation {
        let id = nextID.add(1, ordering: .relaxed).newValue
        state.withLock { _ = $0.reserved.insert(id) }
        return Reservation(id: id)
    }

    /// Forgets a reservation whose write will not happen.
    func release(_ reservation: Reservation) {
        let waiters = state.withLock { state in
            state.reserved.remove(reservation.id)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Starts `write` in the background (in place of `reservation`, if given); it forgets itself when done.
    func start(_ write: @escaping @Sendable () async -> Void, reservation: Reservation? = nil) {
        let id = reservation?.id ?? nextID.add(1, ordering: .relaxed).newValue
        let waiters = state.withLock { state in
            state.tasks[id] = Task.detached(priority: .utility) { [weak self] in
                await write()
                _ = self?.state.withLock { $0.tasks.removeValue(forKey: id) }
            }
            state.reserved.remove(id)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until every write started or reserved so far (and any started meanwhile) is done.
    func waitForAll() async {
        while true {
            if let running = state.withLock({ $0.tasks.first?.value }) {
                await running.value
                continue
            }
            guard state.withLock({ !$0.reserved.isEmpty }) else { return }
            // Woken when a reservation starts its write or goes; then it looks again.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.reserved.isEmpty { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }
}

import Foundation
import CoreMetrics
import Metrics
import NIOCore
import Synchronization
import WebImage

/// One request's answer: the encoded result and what the response says about it.
struct ProcessedImage: Sendable {
    let body: ByteBuffer
    let contentType: String
    let etag: String
    /// Whether the format was chosen from the request's `Accept` (`Vary: Accept`).
    let variesWithAccept: Bool
    /// Where the result came from: response (encoded result in memory), memory, disk, origin.
    let source: String
    /// The origin's caching rules for the source, when known: they cap the `Cache-Control` sent on.
    var freshness: HTTPFreshness? = nil
}

/// Turns a parsed request into a result through the library: the manager fetches (sharing one
/// origin request between concurrent requests), decodes (at size when it can), transforms and
/// caches; the encoded result is kept in memory for warm requests.
final class ImageProcessor: Sendable {
    let manager: ImageManager
    private let responses: ResponseCache
    /// What each source's origin said of it, by source URL, from its last result that came from
    /// the network or the disk: a result made from the decoded source in memory (which carries
    /// no freshness) is capped by it too. The latest 4,096 sources.
    private let sourceFreshness = SourceFreshness(limit: 4096)
    private let limits: ResultLimits
    /// The pixels all requests hold together while their results are transformed and encoded.
    let budget: ProcessingBudget
    /// What `f:auto` chooses from, in order (the configured ones this server can encode).
    let autoFormats: [ImageFormat]
    /// The colour space of results whose request does not name one.
    let colorSpace: ImageColorSpace
    /// Whether results lose the source's private metadata, and keep its copyright, when the
    /// request does not say.
    let stripMetadata: Bool, keepCopyright: Bool
    /// Results made (transformed and encoded), as `webimage_server_renders_total` counts them:
    /// a result kept through its source's 304 is not made again.
    let renders = Atomic<Int>(0)
    private static let renderCounter = CoreMetrics.Counter(label: "webimage_server_renders_total")
    private static let encodeTimer = Metrics.Timer(label: "webimage_stage_duration_seconds", dimensions: [("stage", "encode")])
    private static let transformTimer = Metrics.Timer(label: "webimage_stage_duration_seconds", dimensions: [("stage", "server_transform")])

    init(manager: ImageManager, responseCacheBytes: Int, limits: ResultLimits, budget: ProcessingBudget,
         autoFormats: [ImageFormat] = [.avif, .webp], colorSpace: ImageColorSpace = .sRGB, stripMetadata: Bool = true,
         keepCopyright: Bool = true) {
        self.manager = manager
        self.colorSpace = colorSpace
        self.stripMetadata = stripMetadata
        self.keepCopyright = keepCopyright
        self.autoFormats = autoFormats.filter(Self.canEncode)
        responses = ResponseCache(limit: responseCacheBytes)
        self.limits = limits
        self.budget = budget
    }

    /// Whether a registered coder writes `format`.
    static func canEncode(_ format: ImageFormat) -> Bool { ImageCoders.shared.all.contains { $0.canEncode(format) } }

    /// The format `f:auto` gives for `accept`: of `order`, the one whose MIME type it names
    /// with the highest weight above 0 (the earlier of equals), else nil (the source's format).
    static func autoFormat(accept: String?, order: [ImageFormat]) -> ImageFormat? {
        guard let accept else { return nil }
        return AcceptedTypes(accept).preferred(among: order) { $0.mimeType }
    }

    /// The response cache's key of a request path, as it came (signature, options, source),
    /// before any parsing: equal paths ask for the same result, so a warm request is answered
    /// without parsing or checking it again (it was checked when it was made). The format that
    /// `Accept` chooses is part of it only when the path asks for `f:auto`.
    static func responseKey(path: String, accept: String?, autoFormats: [ImageFormat]) -> String {
        guard contains(path, "f:auto") || contains(path, "format:auto") else { return path }
        return path + "|" + (autoFormat(accept: accept, order: autoFormats)?.rawValue ?? "source")
    }

    /// `responseKey(path:accept:autoFormats:)` with this server's `f:auto` order.
    func responseKey(path: String, accept: String?) -> String {
        Self.responseKey(path: path, accept: accept, autoFormats: autoFormats)
    }

    /// Whether `text` holds `part`, byte by byte: Foundation's `contains` went through NSString
    /// and took half of a warm request's own time.
    static func contains(_ text: String, _ part: StaticString) -> Bool {
        let needle = UnsafeBufferPointer(start: part.utf8Start, count: part.utf8CodeUnitCount)
        guard let first = needle.first else { return true }
        let search = { (bytes: UnsafeBufferPointer<UInt8>) -> Bool in
            guard bytes.count >= needle.count else { return false }
            var index = 0
            while index <= bytes.count - needle.count {
                if bytes[index] == first, UnsafeBufferPointer(rebasing: bytes[index..<index + needle.count]).elementsEqual(needle) { return true }
                index += 1
            }
            return false
        }
        return text.utf8.withContiguousStorageIfAvailable(search) ?? Array(text.utf8).withUnsafeBufferPointer(search)
    }

    /// What the response cache holds for a key.
    enum CachedResponse {
        /// The result of an earlier request of the same key, fresh.
        case fresh(ProcessedImage)
        /// One whose source's freshness ended: `revalidated(_:forKey:)` may keep it.
        case stale(ResponseCache.Entry)
    }

    /// The result of an earlier request of the same key, if the response cache still has it.
    func cachedResponse(forKey key: String) -> CachedResponse? {
        switch responses.entry(forKey: key) {
        case .fresh(let entry)?: .fresh(Self.answer(entry, source: "response"))
        case .stale(let entry)?: .stale(entry)
        case nil: nil
        }
    }

    private static func answer(_ entry: ResponseCache.Entry, source: String) -> ProcessedImage {
        ProcessedImage(body: entry.body, contentType: entry.contentType, etag: entry.etag, variesWithAccept: entry.variesWithAccept,
                       source: source, freshness: entry.freshness)
    }

    /// A stale result kept, when its source is unchanged: the source's disk entry is
    /// revalidated (one conditional request; a 304 refreshes it) and its validators compared
    /// with those the result was made from. Nil when the source changed or cannot be checked:
    /// the result is made again.
    func revalidated(_ entry: ResponseCache.Entry, forKey key: String) async -> ProcessedImage? {
        guard let check = entry.source, let made = entry.freshness else { return nil }
        var context = ImageContext()
        context.colorSpace = check.colorSpace
        guard let (_, now) = try? await manager.dataWithFreshness(for: check.url, context: context), let now,
              now.etag == made.etag, now.lastModified == made.lastModified else { return nil }
        var refreshed = entry
        refreshed.freshness = sourceFreshness.note(now, for: check.url)
        refreshed.expires = ResponseCache.Entry.expiry(of: now)
        responses.store(refreshed, forKey: key)
        return Self.answer(refreshed, source: "revalidated")
    }

    /// The result of `request`, kept under `responseKey` (see `responseKey(path:accept:)`); the
    /// caller has looked there already (`cachedResponse(forKey:)`).
    func process(_ request: ProcessingRequest, accept: String?, responseKey: String) async throws(ProcessingRequestError) -> ProcessedImage {
        let chosen: ImageFormat? = switch request.format {
        case .auto?: Self.autoFormat(accept: accept, order: autoFormats)
        case let format?: ImageFormat(rawValue: format.rawValue)
        case nil: nil
        }
        if let chosen, !Self.canEncode(chosen) {
            throw ProcessingRequestError(400, "this server does not write \(chosen) (its coder plug-in is not registered or has no encoder)")
        }
        let result = try await load(request)
        let image = result.image
        let freshness = sourceFreshness.note(result.freshness, for: request.source)
        // The result's size, every frame counted, before any of its buffers exists (an
        // animation's frames are decoded, transformed and encoded one at a time).
        let size = request.resultSize(width: image.width, height: image.height, resizeByDecoding: request.resizesByDecoding)
        if let refusal = limits.refusal(width: request.info ? 1 : size.width, height: request.info ? 1 : size.height,
                                        frames: image.frameCount) {
            throw refusal
        }
        if request.info { return try info(request, result, freshness: freshness, responseKey: responseKey) }
        // The source's format, where browsers show it and a coder writes it; else PNG.
        let format = chosen ?? ([.png, .jpeg, .webp, .gif, .avif, .jxl].contains(image.format) && Self.canEncode(image.format)
                                ? image.format : .png)
        let source = switch result.cacheType {
        case .memory: "memory"
        case .disk, .all: "disk"
        default: "origin"
        }
        let body: Data
        if let original = result.data, format == image.format, request.quality == nil, request.transformers(resizeByDecoding: false).isEmpty,
           !request.firstFrameOnly || !image.isAnimated, let unchanged = unchangedSource(for: request).body(of: original, decodedAs: image) {
            body = unchanged   // nothing to change but the metadata: the source's own image data
        } else {
            // The source goes to `made` alone, so that it can be let go once transformed (the
            // encoder then holds the result only, unless the memory cache keeps the source).
            _ = consume result
            body = try await made(request, from: consume image, size: size, as: format)
        }
        let etag = "\"" + Digest.sha256(body).prefix(32) + "\""
        let entry = ResponseCache.Entry(body: ByteBuffer(bytes: body), contentType: format.mimeType, etag: etag,
                                        variesWithAccept: request.format == .auto, freshness: freshness,
                                        expires: ResponseCache.Entry.expiry(of: freshness), source: sourceCheck(of: request))
        responses.store(entry, forKey: responseKey)
        return ProcessedImage(body: entry.body, contentType: entry.contentType, etag: etag, variesWithAccept: entry.variesWithAccept, source: source,
                              freshness: freshness)
    }

    /// What the source's own bytes must be to answer `request` unchanged.
    private func unchangedSource(for request: ProcessingRequest) -> UnchangedSource {
        UnchangedSource(stripMetadata: request.stripMetadata ?? stripMetadata, keepCopyright: request.keepCopyright ?? keepCopyright,
                        colorSpace: request.colorSpace ?? colorSpace)
    }

    /// The result of `request` from its decoded source, within the processing budget: the
    /// transformers (an animation's frames one at a time, on demand), then the encoder.
    private func made(_ request: ProcessingRequest, from source: consuming Image, size: (width: Int, height: Int),
                      as format: ImageFormat) async throws(ProcessingRequestError) -> Data {
        let bytes = ResultLimits.workingBytes(sourceWidth: source.width, sourceHeight: source.height, width: size.width, height: size.height)
        do { try await budget.reserve(bytes) } catch { throw ProcessingRequestError(503, "the request was cancelled") }
        defer { budget.release(bytes) }
        renders.add(1, ordering: .relaxed)
        Self.renderCounter.increment()
        let output: Image
        let transformers = request.transformers(resizeByDecoding: request.resizesByDecoding)
        if transformers.isEmpty {
            output = source
        } else {
            let start = ContinuousClock.now
            do { output = try PipelineTransformer(transformers).transform(consume source) } catch {
                throw Self.refusal(for: error)
            }
            Self.transformTimer.recordNanoseconds(Self.nanoseconds(ContinuousClock.now - start))
        }
        // AVIF at libavif speed 9 (imgproxy's default): the slower speeds cost seconds a result.
        let options = ImageEncodingOptions(quality: Double(request.quality ?? 82) / 100, effort: format == .avif ? 0.1 : nil)
        let start = ContinuousClock.now
        let body: Data
        do { body = try ImageCoders.shared.encode(output, as: format, options: options) } catch {
            if error is CancellationError { throw ProcessingRequestError(503, "the request was cancelled") }
            if case .transformFailed = error as? ImageError { throw Self.refusal(for: error) }
            throw ProcessingRequestError(500, "the result could not be encoded as \(format): \(error)")
        }
        // Beside the library's stages (query, download, decode, transform, store).
        Self.encodeTimer.recordNanoseconds(Self.nanoseconds(ContinuousClock.now - start))
        return body
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    /// The decoded source at the size the request needs, through the library's caches.
    private func load(_ request: ProcessingRequest) async throws(ProcessingRequestError) -> ImageResult {
        var context = ImageContext()
        // A result is kept encoded (the response cache) and decoded (memory); on disk only the
        // source, which every size of it is made from: no second encode per request for the disk.
        // A source decoded at full size is its own original: its downloaded bytes go to disk
        // under its key (the unchanged path reads them back on a memory hit).
        context.storeCacheType = request.decodeReduction == .none ? .all : .memory
        context.colorSpace = request.colorSpace ?? colorSpace
        // The transformers run in `made`, within the processing budget, once the result's size
        // is known and checked; the library decodes (at size) and caches the source.
        var options: ImageOptions = request.firstFrameOnly ? .decodeFirstFrameOnly : []
        // What the decoder may allocate, from the header: the source limit; without a resize the
        // result is the source, so no more than a result may be (a 9000x9000 source without a
        // resize is refused before its pixels exist).
        context.decodePixelLimit = request.resizesSource || request.info ? limits.maximumSourcePixels
            : min(limits.maximumSourcePixels, limits.maximumDimension * limits.maximumDimension)
        let box = request.pixelBox
        switch request.decodeReduction {
        case .fit: context.thumbnailPixelSize = PixelSize(width: box.width, height: box.height)
        case .fill: context.fillPixelSize = PixelSize(width: box.width, height: box.height)
        case .none: break
        }
        // A request that may be answered with the source's own bytes needs them on a memory hit
        // too (from disk): else its answer would depend on what the memory cache held.
        if request.info || (request.quality == nil && request.transformers(resizeByDecoding: false).isEmpty) {
            options.insert(.queryMemoryData)
        }
        do {
            return try await manager.result(for: request.source, options: options, context: context)
        } catch {
            throw Self.refusal(for: error)
        }
    }

    /// What a stale result of `request` revalidates.
    private func sourceCheck(of request: ProcessingRequest) -> ResponseCache.SourceCheck {
        ResponseCache.SourceCheck(url: request.source, colorSpace: request.colorSpace ?? colorSpace)
    }

    /// The description of the source (JSON), with the source's own lifetime: it is about the
    /// source, and says something else once the source changes.
    private func info(_ request: ProcessingRequest, _ result: ImageResult, freshness: HTTPFreshness?,
                      responseKey: String) throws(ProcessingRequestError) -> ProcessedImage {
        let image = result.image
        var fields: [String: Any] = ["width": image.width, "height": image.height, "format": "\(image.format)",
                                     "frames": image.frameCount, "animated": image.isAnimated]
        if let data = result.data { fields["bytes"] = data.count }
        guard let body = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else {
            throw ProcessingRequestError(500, "the description could not be written")
        }
        let etag = "\"" + Digest.sha256(body).prefix(32) + "\""
        let entry = ResponseCache.Entry(body: ByteBuffer(bytes: body), contentType: "application/json", etag: etag, variesWithAccept: false,
                                        freshness: freshness, expires: ResponseCache.Entry.expiry(of: freshness), source: sourceCheck(of: request))
        responses.store(entry, forKey: responseKey)
        return ProcessedImage(body: entry.body, contentType: entry.contentType, etag: etag, variesWithAccept: false, source: "origin",
                              freshness: freshness)
    }

    /// The status and one-line reason for a failed load.
    static func refusal(for error: any Error) -> ProcessingRequestError {
        guard let error = error as? ImageError else {
            if error is CancellationError { return ProcessingRequestError(503, "the request was cancelled") }
            return ProcessingRequestError(500, "\(error)")
        }
        switch error {
        case .decodingFailed(let reason, _, _):
            return refusal(for: reason)
        case .badStatusCode(let code, _) where code == 404 || code == 410:
            return ProcessingRequestError(404, "the source answered \(code)")
        case .badStatusCode(let code, _):
            return ProcessingRequestError(502, "the source answered \(code)")
        case .timedOut:
            return ProcessingRequestError(504, "the source did not answer in time")
        case .network(_, let reason):
            return ProcessingRequestError(502, "the source could not be fetched: \(reason)")
        case .redirectNotAllowed:
            return ProcessingRequestError(403, "the source redirects to a URL the server does not fetch")
        case .unreadableFile:
            // Nothing of the file system (a path, the kind of file) is told to the client.
            return ProcessingRequestError(404, "no such local file")
        case .addressNotAllowed(_, let address):
            return ProcessingRequestError(403, "the source leads to \(address), which is not a public address")
        case .responseTooLarge(_, let limit):
            return ProcessingRequestError(422, "the source is larger than \(limit) bytes")
        case .animationTooLarge(let width, let height, let frames, let limit):
            return ProcessingRequestError(422, "the source's \(frames) frames of \(width)x\(height) are over \(limit) pixels in all")
        case .decodeTimedOut:
            return ProcessingRequestError(504, "the source was not decoded in time")
        case .tooLarge(let width, let height, let limit):
            return ProcessingRequestError(422, "the source is \(width)x\(height), over \(limit) pixels")
        case .invalidURL:
            return ProcessingRequestError(400, "the source is not a URL the server fetches")
        case .transformFailed(let reason):
            return ProcessingRequestError(422, "the image could not be processed: \(reason)")
        case .blacklistedURL:
            return ProcessingRequestError(404, "the source failed before and is not tried again for now")
        case .emptyData, .unsupportedFormat, .undecodable, .invalidContentType:
            return ProcessingRequestError(422, "the source is not an image the server decodes")
        default:
            return ProcessingRequestError(500, error.description)
        }
    }
}

/// The origin's caching rules of recent sources (see `ImageProcessor.sourceFreshness`).
final class SourceFreshness: Sendable {
    private let entries = Mutex(LRUList<String, HTTPFreshness>())
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// `freshness` when a result has it (and it is kept for `source`); otherwise what `source`'s
    /// last result had, if it is still known.
    func note(_ freshness: HTTPFreshness?, for source: URL) -> HTTPFreshness? {
        let key = source.absoluteString
        return entries.withLock { entries in
            guard let freshness else { return entries.touch(key) }
            _ = entries.set(freshness, for: key)
            while entries.count > limit, entries.popOldest() != nil {}
            return freshness
        }
    }
}

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
    /// `Content-Disposition` (`fn:`, `att:`), when the request names a file or an attachment.
    var disposition: String? = nil
    /// Why the configured fallback image answered instead (`X-Fallback-Reason`); nil otherwise.
    var fallbackReason: String? = nil
    /// The status: 200, or the configured one of a fallback answer.
    var status = 200
}

/// Turns a parsed request into a result through the library: the manager fetches (sharing one
/// origin request between concurrent requests), decodes (at size when it can), transforms and
/// caches; the encoded result is kept in memory for warm requests.
final class ImageProcessor: Sendable {
    let manager: ImageManager
    let responses: ResponseCache
    /// What each source's origin said of it, by source URL, from its last result that came from
    /// the network or the disk: a result made from the decoded source in memory (which carries
    /// no freshness) is capped by it too. The latest 4,096 sources.
    let sourceFreshness = SourceFreshness(limit: 4096)
    private let limits: ResultLimits
    /// The pixels all requests hold together while their results are transformed and encoded.
    let budget: ProcessingBudget
    /// The configuration's say on every result.
    let defaults: ResultDefaults
    /// What `f:auto` chooses from, in order (the configured ones this server can encode).
    let autoFormats: [ImageFormat]
    /// Results made (transformed and encoded), as `webimage_server_renders_total` counts them:
    /// a result kept through its source's 304 is not made again.
    let renders = Atomic<Int>(0)
    private static let renderCounter = CoreMetrics.Counter(label: "webimage_server_renders_total")
    private static let encodeTimer = Metrics.Timer(label: "webimage_stage_duration_seconds", dimensions: [("stage", "encode")])
    private static let transformTimer = Metrics.Timer(label: "webimage_stage_duration_seconds", dimensions: [("stage", "server_transform")])

    init(manager: ImageManager, responseCacheBytes: Int, limits: ResultLimits, budget: ProcessingBudget, defaults: ResultDefaults = .init()) {
        self.manager = manager
        self.defaults = defaults
        autoFormats = defaults.autoFormats.filter(Self.canEncode)
        responses = ResponseCache(limit: responseCacheBytes)
        self.limits = limits
        self.budget = budget
    }

    /// The result of `request`, kept under `responseKey` (see `responseKey(path:accept:)`); the
    /// caller has looked there already (`cachedResponse(forKey:)`). A source that fails is
    /// answered with the configured fallback image, when there is one.
    func process(_ request: ProcessingRequest, accept: String?, responseKey: String) async throws(ProcessingRequestError) -> ProcessedImage {
        let chosen: ImageFormat? = switch request.format {
        case .auto?: Self.autoFormat(accept: accept, order: autoFormats)
        case let format?: ImageFormat(rawValue: format.rawValue)
        case nil: nil
        }
        if let chosen, !Self.canEncode(chosen) {
            throw ProcessingRequestError(400, "this server does not write \(chosen) (its coder plug-in is not registered or has no encoder)")
        }
        if request.raw { return try await raw(request, responseKey: responseKey) }
        let result: ImageResult
        do { result = try await load(request) } catch {
            guard let fallback = defaults.fallback, !request.info, [404, 422, 502, 504].contains(error.status) else { throw error }
            return try await fallbackAnswer(request, fallback, as: chosen, failure: error)
        }
        let image = result.image
        let freshness = sourceFreshness.note(result.freshness, for: request.source)
        // The result's size, every frame counted, before any of its buffers exists (an
        // animation's frames are decoded, transformed and encoded one at a time).
        let size = request.resultSize(width: image.width, height: image.height)
        if let refusal = limits.refusal(width: request.info ? 1 : size.width, height: request.info ? 1 : size.height,
                                        frames: image.frameCount) {
            throw refusal
        }
        if request.info { return try info(request, result, freshness: freshness, responseKey: responseKey) }
        let format = chosen ?? Self.resultFormat(of: image)
        let source = switch result.cacheType {
        case .memory: "memory"
        case .disk, .all: "disk"
        default: "origin"
        }
        let body: Data
        if let original = result.data, format == image.format, request.mayAnswerUnchanged(in: format), !request.firstFrameOnly || !image.isAnimated,
           original.count <= request.maximumBytes ?? .max, let unchanged = unchangedSource(for: request).body(of: original, decodedAs: image) {
            body = unchanged   // nothing to change but the metadata: the source's own image data
        } else {
            // The source goes to `made` alone, so that it can be let go once transformed (the
            // encoder then holds the result only, unless the memory cache keeps the source).
            _ = consume result
            body = try await made(request, from: consume image, size: size, as: format)
        }
        let etag = "\"" + Digest.sha256(body).prefix(32) + "\""
        var entry = ResponseCache.Entry(body: ByteBuffer(bytes: body), contentType: format.mimeType, etag: etag,
                                        variesWithAccept: request.format == .auto, freshness: freshness,
                                        expires: ResponseCache.Entry.expiry(of: freshness), source: sourceCheck(of: request),
                                        disposition: request.disposition(format: format))
        entry.urlExpiry = request.urlExpiry
        responses.store(entry, forKey: responseKey)
        return ProcessedImage(body: entry.body, contentType: entry.contentType, etag: etag, variesWithAccept: entry.variesWithAccept, source: source,
                              freshness: freshness, disposition: entry.disposition)
    }

    /// The format of a result that names none: the source's, where browsers show it and a
    /// coder writes it; else PNG.
    static func resultFormat(of image: Image) -> ImageFormat {
        [.png, .jpeg, .webp, .gif, .avif, .jxl].contains(image.format) && canEncode(image.format) ? image.format : .png
    }

    /// What the source's own bytes must be to answer `request` unchanged.
    private func unchangedSource(for request: ProcessingRequest) -> UnchangedSource {
        UnchangedSource(stripMetadata: request.stripMetadata ?? defaults.stripMetadata, keepCopyright: request.keepCopyright ?? defaults.keepCopyright,
                        colorSpace: request.colorSpace ?? defaults.colorSpace)
    }

    /// The source's bytes as they came (`raw`): fetched through the library's caches within
    /// the source limits, not decoded; refused when they are not an image.
    private func raw(_ request: ProcessingRequest, responseKey: String) async throws(ProcessingRequestError) -> ProcessedImage {
        var context = ImageContext()
        context.colorSpace = request.colorSpace ?? defaults.colorSpace
        let data: Data, freshness: HTTPFreshness?
        do { (data, freshness) = try await manager.dataWithFreshness(for: request.source, context: context) } catch {
            throw Self.refusal(for: error)
        }
        let format = ImageFormat(sniffing: data)
        guard format != .unknown else { throw ProcessingRequestError(422, "the source is not an image the server knows") }
        let noted = sourceFreshness.note(freshness, for: request.source)
        let etag = "\"" + Digest.sha256(data).prefix(32) + "\""
        var entry = ResponseCache.Entry(body: ByteBuffer(bytes: data), contentType: format.mimeType, etag: etag, variesWithAccept: false,
                                        freshness: noted, expires: ResponseCache.Entry.expiry(of: noted), source: sourceCheck(of: request),
                                        disposition: request.disposition(format: format))
        entry.urlExpiry = request.urlExpiry
        responses.store(entry, forKey: responseKey)
        return ProcessedImage(body: entry.body, contentType: entry.contentType, etag: etag, variesWithAccept: false, source: "raw",
                              freshness: noted, disposition: entry.disposition)
    }

    /// The configured fallback image, processed as `request` asks, for a source that failed
    /// with `failure`: the configured status, a header naming the failure, and kept nowhere.
    private func fallbackAnswer(_ request: ProcessingRequest, _ fallback: Image, as chosen: ImageFormat?,
                                failure: ProcessingRequestError) async throws(ProcessingRequestError) -> ProcessedImage {
        let size = request.resultSize(width: fallback.width, height: fallback.height)
        if let refusal = limits.refusal(width: size.width, height: size.height, frames: fallback.frameCount) { throw refusal }
        let format = chosen ?? Self.resultFormat(of: fallback)
        let body = try await made(request, from: fallback, size: size, as: format)
        var answer = ProcessedImage(body: ByteBuffer(bytes: body), contentType: format.mimeType, etag: "\"" + Digest.sha256(body).prefix(32) + "\"",
                                    variesWithAccept: request.format == .auto, source: "fallback",
                                    freshness: HTTPFreshness(date: Date(), lifetime: nil, noStore: true), disposition: request.disposition(format: format))
        answer.fallbackReason = failure.description
        answer.status = defaults.fallbackStatus
        return answer
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
        var transformers = request.transformers(watermark: defaults.watermark)
        if let background = request.background, format == .jpeg { transformers.append(BackgroundFlatteningTransformer(color: background)) }
        if transformers.isEmpty {
            output = source
        } else {
            let start = ContinuousClock.now
            do { output = try PipelineTransformer(transformers).transform(consume source) } catch {
                throw Self.refusal(for: error)
            }
            Self.transformTimer.recordNanoseconds(Self.nanoseconds(ContinuousClock.now - start))
        }
        let start = ContinuousClock.now
        let body: Data
        do {
            body = try ResultEncoding.encode(output, as: format, quality: defaults.quality(of: request, in: format), maximumBytes: request.maximumBytes)
        } catch {
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
        context.colorSpace = request.colorSpace ?? defaults.colorSpace
        context.pdfPageIndex = request.page
        context.bitDepth = request.bitDepth
        // The transformers run in `made`, within the processing budget, once the result's size
        // is known and checked; the library decodes (at size) and caches the source.
        var options: ImageOptions = request.firstFrameOnly ? .decodeFirstFrameOnly : []
        // What the decoder may allocate, from the header: the source limit; without a resize the
        // result is the source, so no more than a result may be (a 9000x9000 source without a
        // resize is refused before its pixels exist).
        context.decodePixelLimit = request.hasGeometry || request.info ? limits.maximumSourcePixels
            : min(limits.maximumSourcePixels, limits.maximumDimension * limits.maximumDimension)
        let box = request.pixelBox
        switch request.decodeReduction {
        case .fit: context.thumbnailPixelSize = PixelSize(width: box.width, height: box.height)
        case .fill:
            context.fillPixelSize = PixelSize(width: box.width, height: box.height)
            context.fillAnchor = request.decodeFillAnchor
        case .none: break
        }
        // A request that may be answered with the source's own bytes needs them on a memory hit
        // too (from disk): else its answer would depend on what the memory cache held.
        if request.info || request.mayAnswerUnchanged(in: nil) { options.insert(.queryMemoryData) }
        do {
            return try await manager.result(for: request.source, options: options, context: context)
        } catch {
            throw Self.refusal(for: error)
        }
    }

    /// What a stale result of `request` revalidates.
    func sourceCheck(of request: ProcessingRequest) -> ResponseCache.SourceCheck {
        ResponseCache.SourceCheck(url: request.source, colorSpace: request.colorSpace ?? defaults.colorSpace)
    }
}

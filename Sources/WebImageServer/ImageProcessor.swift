import Foundation
import WebImage

/// One request's answer: the encoded result and what the response says about it.
struct ProcessedImage: Sendable {
    let body: Data
    let contentType: String
    let etag: String
    /// Whether the format was chosen from the request's `Accept` (`Vary: Accept`).
    let variesWithAccept: Bool
    /// Where the result came from: response (encoded result in memory), memory, disk, origin.
    let source: String
}

/// Turns a parsed request into a result through the library: the manager fetches (sharing one
/// origin request between concurrent requests), decodes (at size when it can), transforms and
/// caches; the encoded result is kept in memory for warm requests.
final class ImageProcessor: Sendable {
    let manager: ImageManager
    private let responses: ResponseCache
    private let maximumFrames: Int
    private let maximumDimension: Int

    init(manager: ImageManager, responseCacheBytes: Int, maximumFrames: Int, maximumDimension: Int) {
        self.manager = manager
        responses = ResponseCache(limit: responseCacheBytes)
        self.maximumFrames = maximumFrames
        self.maximumDimension = maximumDimension
    }

    func process(_ request: ProcessingRequest, accept: String?) async throws(ProcessingRequestError) -> ProcessedImage {
        let acceptsWebP = accept?.lowercased().contains("image/webp") ?? false
        let choice: String = switch request.format {
        case .auto?: acceptsWebP ? "webp" : "source"
        case let format?: format.rawValue
        case nil: "source"
        }
        let responseKey = request.signedPath + "|" + choice
        if let cached = responses.entry(forKey: responseKey) {
            return ProcessedImage(body: cached.body, contentType: cached.contentType, etag: cached.etag,
                                  variesWithAccept: request.format == .auto, source: "response")
        }
        let result = try await load(request)
        let image = result.image
        if image.frameCount > maximumFrames {
            throw ProcessingRequestError(422, "the source has \(image.frameCount) frames, more than \(maximumFrames)")
        }
        if request.info { return try info(request, result, responseKey: responseKey) }
        let format: ImageFormat = switch choice {
        case "webp": .webp
        case "png": .png
        case "jpeg": .jpeg
        case "gif": .gif
        default: [.png, .jpeg, .webp, .gif].contains(image.format) ? image.format : .png
        }
        let body: Data
        if let original = result.data, format == image.format, request.quality == nil, request.transformers(resizeByDecoding: false).isEmpty,
           !request.firstFrameOnly || !image.isAnimated {
            body = original   // nothing to change: the source's own bytes
        } else {
            let options = ImageEncodingOptions(quality: Double(request.quality ?? 82) / 100)
            do { body = try ImageCoders.shared.encode(image, as: format, options: options) } catch {
                throw ProcessingRequestError(500, "the result could not be encoded as \(format): \(error)")
            }
        }
        let etag = "\"" + Digest.sha256(body).prefix(32) + "\""
        let entry = ResponseCache.Entry(body: body, contentType: format.mimeType, etag: etag)
        responses.store(entry, forKey: responseKey)
        let source = switch result.cacheType {
        case .memory: "memory"
        case .disk, .all: "disk"
        default: "origin"
        }
        return ProcessedImage(body: body, contentType: entry.contentType, etag: etag, variesWithAccept: request.format == .auto, source: source)
    }

    /// The decoded and transformed image, through the library's caches.
    private func load(_ request: ProcessingRequest) async throws(ProcessingRequestError) -> ImageResult {
        var context = ImageContext()
        var options: ImageOptions = request.firstFrameOnly ? .decodeFirstFrameOnly : .transformAnimatedImage
        let byDecoding = request.resizesByDecoding
        if byDecoding {
            let box = request.pixelBox, free = 1 << 20
            context.thumbnailPixelSize = PixelSize(width: box.width > 0 ? box.width : free, height: box.height > 0 ? box.height : free)
        }
        let transformers = request.transformers(resizeByDecoding: byDecoding)
        if !transformers.isEmpty { context.transformer = PipelineTransformer(transformers) }
        if request.info { options.insert(.queryMemoryData) }
        do {
            return try await manager.result(for: request.source, options: options, context: context)
        } catch {
            throw Self.refusal(for: error)
        }
    }

    private func info(_ request: ProcessingRequest, _ result: ImageResult, responseKey: String) throws(ProcessingRequestError) -> ProcessedImage {
        let image = result.image
        var fields: [String: Any] = ["width": image.width, "height": image.height, "format": "\(image.format)",
                                     "frames": image.frameCount, "animated": image.isAnimated]
        if let data = result.data { fields["bytes"] = data.count }
        guard let body = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else {
            throw ProcessingRequestError(500, "the description could not be written")
        }
        let etag = "\"" + Digest.sha256(body).prefix(32) + "\""
        responses.store(.init(body: body, contentType: "application/json", etag: etag), forKey: responseKey)
        return ProcessedImage(body: body, contentType: "application/json", etag: etag, variesWithAccept: false, source: "origin")
    }

    /// The status and one-line reason for a failed load.
    static func refusal(for error: any Error) -> ProcessingRequestError {
        guard let error = error as? ImageError else {
            if error is CancellationError { return ProcessingRequestError(503, "the request was cancelled") }
            return ProcessingRequestError(500, "\(error)")
        }
        switch error {
        case .badStatusCode(let code, _) where code == 404 || code == 410:
            return ProcessingRequestError(404, "the source answered \(code)")
        case .badStatusCode(let code, _):
            return ProcessingRequestError(502, "the source answered \(code)")
        case .timedOut:
            return ProcessingRequestError(504, "the source did not answer in time")
        case .network(_, let reason):
            return ProcessingRequestError(502, "the source could not be fetched: \(reason)")
        case .addressNotAllowed(_, let address):
            return ProcessingRequestError(403, "the source leads to \(address), which is not a public address")
        case .responseTooLarge(_, let limit):
            return ProcessingRequestError(422, "the source is larger than \(limit) bytes")
        case .tooLarge(let width, let height, let limit):
            return ProcessingRequestError(422, "the source is \(width)x\(height), over \(limit) pixels")
        case .invalidURL:
            return ProcessingRequestError(400, "the source is not a URL the server fetches")
        case .transformFailed(let reason):
            return ProcessingRequestError(422, "the image could not be processed: \(reason)")
        case .blacklistedURL:
            return ProcessingRequestError(404, "the source failed before and is not tried again for now")
        case .emptyData, .unsupportedFormat, .undecodable, .invalidContentType, .decodingFailed:
            return ProcessingRequestError(422, "the source is not an image the server decodes")
        default:
            return ProcessingRequestError(500, error.description)
        }
    }
}

import Foundation
import NIOCore
import WebImage

extension ImageProcessor {
    /// The description of the source (JSON), with the source's own lifetime: it is about the
    /// source, and says something else once the source changes.
    func info(_ request: ProcessingRequest, _ result: ImageResult, freshness: HTTPFreshness?,
              responseKey: String) throws(ProcessingRequestError) -> ProcessedImage {
        let image = result.image
        var fields: [String: Any] = ["width": image.width, "height": image.height, "format": "\(image.format)",
                                     "frames": image.frameCount, "animated": image.isAnimated]
        if let data = result.data { fields["bytes"] = data.count }
        guard let body = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else {
            throw ProcessingRequestError(500, "the description could not be written")
        }
        let etag = "\"" + Digest.sha256(body).prefix(32) + "\""
        var entry = ResponseCache.Entry(body: ByteBuffer(bytes: body), contentType: "application/json", etag: etag, variesWithAccept: false,
                                        freshness: freshness, expires: ResponseCache.Entry.expiry(of: freshness), source: sourceCheck(of: request))
        entry.urlExpiry = request.urlExpiry
        responses.store(entry, forKey: responseKey)
        return ProcessedImage(body: entry.body, contentType: entry.contentType, etag: etag, variesWithAccept: false, source: "origin",
                              freshness: freshness)
    }
}

import Foundation

/// `data:` URLs (RFC 2397): base64 or percent-encoded bytes inside the URL itself.
public struct DataImageLoader: ImageLoader {
    /// Local bytes: no rate limiting.
    public var capabilities: ImageLoaderCapabilities { .local }

    /// The data-URL loader.
    public init() {}

    public func canLoad(_ url: URL) -> Bool { url.scheme?.lowercased() == "data" }

    /// Decodes the URL's bytes; with a decryptor on the request, they are decrypted first.
    public func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        let stream = AsyncThrowingStream<ImageLoaderEvent, any Error> { continuation in
            do {
                let (data, mime) = try DataImageLoader.decode(request.url)
                continuation.yield(.response(ImageLoaderResponse(statusCode: 200, headers: ["content-type": mime],
                                                                 expectedContentLength: Int64(data.count), url: request.url)))
                continuation.yield(.data(data))
                continuation.yield(.progress(ImageProgress(receivedBytes: Int64(data.count), expectedBytes: Int64(data.count))))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return request.decryptor.map { $0.decrypting(stream, url: request.url) } ?? stream
    }

    /// The bytes and MIME type of a data URL.
    static func decode(_ url: URL) throws -> (Data, String) {
        let string = url.absoluteString
        guard let comma = string.firstIndex(of: ","), string.lowercased().hasPrefix("data:") else {
            throw ImageError.invalidURL(string)
        }
        let header = string[string.index(string.startIndex, offsetBy: 5)..<comma]
        let payload = String(string[string.index(after: comma)...])
        let parts = header.split(separator: ";")
        let mime = parts.first.map(String.init).flatMap { $0.isEmpty ? nil : $0 } ?? "text/plain"
        if parts.contains(where: { $0.lowercased() == "base64" }) {
            let cleaned = (payload.removingPercentEncoding ?? payload).filter { !$0.isWhitespace }
            guard let data = Data(base64Encoded: cleaned, options: .ignoreUnknownCharacters) else {
                throw ImageError.network(url: url, reason: "the data URL's base64 is malformed")
            }
            return (data, mime)
        }
        guard let decoded = payload.removingPercentEncoding else {
            throw ImageError.network(url: url, reason: "the data URL's percent-encoding is malformed")
        }
        return (Data(decoded.utf8), mime)
    }
}

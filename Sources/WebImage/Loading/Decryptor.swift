import Foundation

/// Turns downloaded bytes into image bytes before decoding (SDWebImage's
/// `SDWebImageDownloaderDecryptor`): for servers that send images encrypted or encoded.
/// A loader with a decryptor delivers the body in one piece once the transfer ends.
public struct Decryptor: Sendable {
    /// The transformation; throwing fails the load.
    public let decrypt: @Sendable (Data, ImageLoaderResponse) throws -> Data

    /// A decryptor from a function.
    public init(_ decrypt: @escaping @Sendable (Data, ImageLoaderResponse) throws -> Data) { self.decrypt = decrypt }

    /// Bodies sent as base64 text.
    public static let base64 = Decryptor { data, response in
        guard let decoded = Data(base64Encoded: data, options: .ignoreUnknownCharacters) else {
            throw ImageError.network(url: response.url, reason: "the body is not valid base64")
        }
        return decoded
    }
}

extension Decryptor {
    /// `source`'s events with the body decrypted, for loaders that stream (file and data URLs):
    /// the response and progress pass through, the chunks are held, and the decrypted body
    /// comes as one chunk at the end. A decryptor that throws fails the load.
    func decrypting(_ source: AsyncThrowingStream<ImageLoaderEvent, any Error>, url: URL) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        .produced { continuation in
            var body = Data(), response: ImageLoaderResponse?
            for try await event in source {
                switch event {
                case .response(let first):
                    response = first
                    continuation.yield(event)
                case .data(let chunk): body.append(chunk)
                case .progress: continuation.yield(event)
                }
            }
            try Task.checkCancellation()
            let answered = response ?? ImageLoaderResponse(statusCode: 200, headers: [:], expectedContentLength: nil, url: url)
            continuation.yield(.data(try decrypt(body, answered)))
        }
    }
}

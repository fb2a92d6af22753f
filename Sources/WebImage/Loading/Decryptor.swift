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

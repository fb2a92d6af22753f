import Foundation

/// Everything that can go wrong while loading, decoding, encoding or transforming an image.
///
/// Every failure of the library is one of these cases (or a `CancellationError`). Each case
/// carries what is needed to say what happened in one sentence (see `description`).
public enum ImageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data was empty.
    case emptyData
    /// The data is not in a format any registered coder can decode.
    case unsupportedFormat(ImageFormat)
    /// The data looked like `format` but could not be decoded (corrupt or truncated).
    case undecodable(ImageFormat, reason: String)
    /// The image is larger than the configured pixel limit; nothing was allocated for it.
    case tooLarge(width: Int, height: Int, limit: Int)
    /// An animation whose `frames` frames of `width` x `height` pixels are over `limit` pixels
    /// in all: refused before its frames are composited where every frame must be held at once
    /// (an isolated decode returns them all).
    case animationTooLarge(width: Int, height: Int, frames: Int, limit: Int)
    /// An isolated decode (`ImageDecodingIsolation`) did not finish within its time limit of
    /// `seconds`, and was stopped.
    case decodeTimedOut(seconds: Double)
    /// The image could not be encoded as `format`.
    case encodingFailed(ImageFormat, reason: String)
    /// A frame index outside `0..<frameCount` was asked for.
    case frameOutOfRange(index: Int, count: Int)
    /// The file could not be read.
    case unreadableFile(path: String, reason: String)
    /// The URL is empty, relative, or has a scheme no registered loader handles.
    case invalidURL(String)
    /// The URL failed before in a way that means it is bad, and `.retryFailed` was not set.
    case blacklistedURL(URL)
    /// `.fromCacheOnly` was set and no cache holds the image (the cache key is given).
    case notInCache(key: String)
    /// The manager's `shouldDownload` hook refused to download the URL and no cache holds it.
    case downloadNotAllowed(URL)
    /// The server answered with a status code outside the acceptable ones.
    case badStatusCode(Int, url: URL)
    /// The response's content type is not one of the acceptable ones.
    case invalidContentType(String?, url: URL)
    /// Nothing arrived within the timeout (no connection, no first byte, or a stall).
    case timedOut(url: URL)
    /// The transfer failed: DNS, refused or reset connection, TLS, too many redirects, short body.
    case network(url: URL, reason: String)
    /// The response is larger than the loader's maximum size; the transfer was aborted.
    case responseTooLarge(url: URL, limit: Int)
    /// A request modifier refused the request.
    case requestCancelledByModifier(url: URL)
    /// The loader's address policy (`AddressPolicy.publicOnly`) refused to connect to
    /// `address`, which the URL's host (or a redirect) resolved to; nothing was sent.
    case addressNotAllowed(url: URL, address: String)
    /// A redirect of `url` to `location` was not followed: its scheme is not http or https, or
    /// the loader's `HTTPImageLoader.Configuration.redirectFilter` refused it. Nothing was sent
    /// to `location`.
    case redirectNotAllowed(url: URL, location: String)
    /// A transformer could not produce an image (invalid parameters, empty result, ...).
    case transformFailed(String)
    /// The disk cache could not write an entry (full disk, read-only or missing directory, ...).
    /// Entries stored before are unaffected.
    case cacheWriteFailed(path: String, reason: String)
    /// A cache namespace that is not a plain folder name: empty, with a path separator or NUL,
    /// `.`, `..` or another leading dot, or longer than a file name may be
    /// (see `ImageCache.validate(namespace:)`).
    case invalidNamespace(String, reason: String)
    /// Decoding the bytes of `source` (the URL loaded, or a cache key) failed; the wrapped
    /// error says why (`.emptyData`, `.unsupportedFormat`, `.undecodable`, `.tooLarge` or `.animationTooLarge`). The
    /// manager names every decode failure of a load this way, as `.badStatusCode(_:url:)`
    /// names its URL; `Image(data:)` and the coders, which have no source, throw the reason
    /// itself. `decodeFailure` gives the reason in either case.
    indirect case decodingFailed(ImageError, source: String, byteCount: Int)

    /// The reason of a decode failure, unwrapped from `.decodingFailed` (or `self`).
    public var decodeFailure: ImageError {
        if case .decodingFailed(let reason, _, _) = self { return reason.decodeFailure }
        return self
    }

    public var description: String {
        switch self {
        case .emptyData: "The image data is empty."
        case .unsupportedFormat(let format):
            format == .unknown ? "The data is not an image format this library recognises."
                : "No registered coder decodes \(format) images."
        case .undecodable(let format, let reason): "The \(format) data could not be decoded: \(reason)."
        case .tooLarge(let width, let height, let limit):
            "The image is \(width)x\(height) pixels, over the limit of \(limit) pixels."
        case .animationTooLarge(let width, let height, let frames, let limit):
            "The animation's \(frames) frames of \(width)x\(height) pixels are over the limit of \(limit) pixels in all."
        case .decodeTimedOut(let seconds): "The image was not decoded within its time limit of \(seconds) s, and its decode was stopped."
        case .encodingFailed(let format, let reason): "The image could not be encoded as \(format): \(reason)."
        case .frameOutOfRange(let index, let count): "Frame \(index) was asked for, but the image has \(count) frames."
        case .unreadableFile(let path, let reason): "The file \(path) could not be read: \(reason)."
        case .invalidURL(let url): "The URL \"\(url)\" cannot be loaded: it is empty, relative, or of an unsupported scheme."
        case .blacklistedURL(let url): "\(url.absoluteString) failed before and is blacklisted; use .retryFailed to try again."
        case .notInCache(let key): "No cache holds \(key), and only the cache was asked (.fromCacheOnly)."
        case .downloadNotAllowed(let url): "Downloading \(url.absoluteString) was not allowed, and no cache holds it."
        case .badStatusCode(let code, let url): "The server answered \(url.absoluteString) with status \(code)."
        case .invalidContentType(let type, let url): "The response for \(url.absoluteString) has content type \(type ?? "(none)"), which is not accepted."
        case .timedOut(let url): "Loading \(url.absoluteString) timed out."
        case .network(let url, let reason): "Loading \(url.absoluteString) failed: \(reason)."
        case .responseTooLarge(let url, let limit): "The response for \(url.absoluteString) is larger than \(limit) bytes."
        case .requestCancelledByModifier(let url): "The request modifier refused to load \(url.absoluteString)."
        case .addressNotAllowed(let url, let address):
            "Loading \(url.absoluteString) was refused: it leads to \(address), which is not a public address (the loader allows public addresses only)."
        case .redirectNotAllowed(let url, let location): "\(url.absoluteString) redirected to \(location), which the loader does not follow."
        case .transformFailed(let reason): "The image could not be transformed: \(reason)."
        case .cacheWriteFailed(let path, let reason): "The disk cache could not write \(path): \(reason)."
        case .invalidNamespace(let namespace, let reason): "The cache namespace \"\(namespace)\" is not a plain name: \(reason)."
        case .decodingFailed(let reason, let source, let byteCount):
            switch reason.decodeFailure {
            case .emptyData: "The response for \(source) is empty (0 bytes)."
            case .unsupportedFormat(let format):
                format == .unknown ? "The \(byteCount) bytes of \(source) are not in an image format this library recognises."
                    : "The \(byteCount) bytes of \(source) are \(format), which no registered coder decodes."
            case .undecodable(let format, let why): "The \(byteCount) bytes of \(source) could not be decoded as \(format): \(why)."
            case .tooLarge(let width, let height, let limit):
                "The image at \(source) (\(byteCount) bytes) is \(width)x\(height) pixels, over the limit of \(limit) pixels."
            case .animationTooLarge(let width, let height, let frames, let limit):
                "The animation at \(source) (\(byteCount) bytes) has \(frames) frames of \(width)x\(height) pixels, over the limit of \(limit) pixels in all."
            default: "The \(byteCount) bytes of \(source) could not be decoded: \(String(reason.description.dropLast()))."
            }
        }
    }
}

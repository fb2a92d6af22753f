import Foundation
import Synchronization

/// An ordered registry of coders (SDWebImage's `SDImageCodersManager`).
///
/// A coder added later is tried first, so an application can override a built-in one.
/// Thread-safe: coders can be added while other tasks decode.
public final class ImageCoders: Sendable {
    /// The registry the library uses by default: GIF, WebP, JPEG and PNG (APNG included), BMP
    /// and ICO.
    public static let shared = ImageCoders()

    /// The built-in coders, in the order they are tried.
    public static var builtIn: [any ImageCoder] { [ICOCoder(), BMPCoder(), PNGCoder(), JPEGCoder(), WebPCoder(), GIFCoder()].reversed() }

    private let coders: Mutex<[any ImageCoder]>
    private let isolationBox: Mutex<(any ImageDecodingIsolation)?>

    /// A registry holding `coders`, tried in order (first first), whose asynchronous decodes
    /// run in `isolation` when one is given.
    public init(_ coders: [any ImageCoder] = ImageCoders.builtIn, isolation: (any ImageDecodingIsolation)? = nil) {
        self.coders = Mutex(coders)
        self.isolationBox = Mutex(isolation)
    }

    /// Where this registry's asynchronous decodes run (`decode(_:options:context:) async`),
    /// nil for this process (the default). While it is set, no incremental decoder is made:
    /// progressive loads give no previews.
    public var isolation: (any ImageDecodingIsolation)? {
        get { isolationBox.withLock { $0 } }
        set { isolationBox.withLock { $0 = newValue } }
    }

    /// The coders in the order they are tried.
    public var all: [any ImageCoder] { coders.withLock { $0 } }

    /// Adds a coder that is tried before every coder already registered.
    public func add(_ coder: any ImageCoder) {
        coders.withLock { $0.insert(coder, at: 0) }
    }

    /// Removes every coder `predicate` accepts.
    public func remove(where predicate: (any ImageCoder) -> Bool) {
        coders.withLock { $0.removeAll(where: predicate) }
    }

    /// Decodes `data` with the first coder that accepts it.
    /// - Throws: `ImageError.emptyData`, `ImageError.unsupportedFormat`, or the coder's error.
    public func decode(_ data: Data, options: ImageDecodingOptions = .init()) throws -> Image {
        try decode(data, options: options, context: ImageContext())
    }

    /// Decodes `data` with the first coder that accepts it, for a call whose context is
    /// `context` (passed on to the coder).
    /// - Throws: `ImageError.emptyData`, `ImageError.unsupportedFormat`, or the coder's error.
    public func decode(_ data: Data, options: ImageDecodingOptions, context: ImageContext) throws -> Image {
        try decodeInProcess(data, options: options, context: context)
    }

    private func decodeInProcess(_ data: Data, options: ImageDecodingOptions, context: ImageContext) throws -> Image {
        guard !data.isEmpty else { throw ImageError.emptyData }
        guard let coder = coder(for: data, hint: context.formatHint) else {
            throw ImageError.unsupportedFormat(ImageFormat(sniffing: data))
        }
        return try coder.decode(data, options: options, context: context)
    }

    /// The first coder that recognises `data`; else, with a `hint`, the first that takes it as
    /// that format (`ImageCoder.canDecode(_:hint:)`).
    private func coder(for data: Data, hint: ImageFormat?) -> (any ImageCoder)? {
        let all = self.all
        if let coder = all.first(where: { $0.canDecode(data) }) { return coder }
        guard let hint else { return nil }
        return all.first { $0.canDecode(data, hint: hint) }
    }

    /// Decodes `data` in this registry's `isolation` when it has one, else as the synchronous
    /// `decode(_:options:context:)` does. The manager and the cache decode downloaded and
    /// cached bytes through this.
    /// - Throws: as the synchronous decode, or the isolation's errors.
    public func decode(_ data: Data, options: ImageDecodingOptions, context: ImageContext) async throws -> Image {
        guard let isolation else { return try decodeInProcess(data, options: options, context: context) }
        guard !data.isEmpty else { throw ImageError.emptyData }
        return try await isolation.decode(data, options: options)
    }

    /// Encodes `image` as `format` with the first coder that can.
    /// - Throws: `ImageError.encodingFailed`.
    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions = .init()) throws -> Data {
        guard let coder = all.first(where: { $0.canEncode(format) }) else {
            throw ImageError.encodingFailed(format, reason: "no registered coder encodes this format")
        }
        // Metadata to keep that this format's encoder would drop is refused, not lost.
        if let metadata = options.metadata, metadata.exifData != nil || metadata.xmp != nil, ![.jpeg, .png, .webp, .avif, .heic, .jxl].contains(format) {
            throw ImageError.encodingFailed(format, reason: "this format's encoder writes no EXIF or XMP")
        }
        return try coder.encode(image, as: format, options: options)
    }

    /// An incremental decoder for data that starts with `prefix` (at least the first 12 bytes),
    /// or nil when no coder recognises it or can decode it incrementally.
    public func makeIncrementalDecoder(for prefix: Data, options: ImageDecodingOptions = .init(), context: ImageContext = .init())
        -> (any IncrementalImageDecoder)? {
        guard isolation == nil else { return nil }
        return coder(for: prefix, hint: context.formatHint)?.makeIncrementalDecoder(options: options, context: context)
    }
}

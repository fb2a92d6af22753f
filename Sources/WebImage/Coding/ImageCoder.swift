import Foundation

/// A codec: decodes data of the formats it recognises and encodes images into formats.
///
/// Coders are registered in an `ImageCoders` registry; the first one whose `canDecode`
/// accepts the data decodes it. Decoding and encoding are synchronous CPU work: call them from
/// a task (the manager bounds how many run at once), never from the main actor.
public protocol ImageCoder: Sendable {
    /// Whether this coder decodes `data` (judged from its first bytes).
    func canDecode(_ data: Data) -> Bool
    /// Whether this coder decodes `data` that the call says is in `hint`'s format, asked only
    /// when no coder recognised it (`ImageContext.formatHint`, SDWebImage's
    /// `imageTypeIdentifierHint`): for a format whose files do not always say what they are.
    /// The default: no.
    func canDecode(_ data: Data, hint: ImageFormat) -> Bool
    /// Decodes `data`.
    /// - Throws: `ImageError.undecodable` for corrupt or truncated data, `ImageError.tooLarge`
    ///   when the image is over `options.pixelLimit` (checked before allocating pixels).
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image
    /// Whether this coder encodes into `format`.
    func canEncode(_ format: ImageFormat) -> Bool
    /// Encodes `image` as `format`.
    /// - Throws: `ImageError.encodingFailed`.
    func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data
    /// A decoder that takes the data in pieces as it arrives (progressive loading), or nil if
    /// this coder cannot decode incrementally.
    func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)?
    /// Decodes `data` for a call whose context is `context` (custom `ImageContextKey` values
    /// included), as SDWebImage hands its coders the `SDWebImageContext`. The default ignores
    /// the context and calls `decode(_:options:)`.
    /// - Throws: as `decode(_:options:)`.
    func decode(_ data: Data, options: ImageDecodingOptions, context: ImageContext) throws -> Image
    /// An incremental decoder for a call whose context is `context`. The default ignores the
    /// context and calls `makeIncrementalDecoder(options:)`.
    func makeIncrementalDecoder(options: ImageDecodingOptions, context: ImageContext) -> (any IncrementalImageDecoder)?
}

extension ImageCoder {
    /// A coder takes only the data it recognises, unless it says otherwise.
    public func canDecode(_ data: Data, hint: ImageFormat) -> Bool { false }

    /// No incremental decoding unless a coder provides it.
    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? { nil }

    /// Decodes without looking at the context.
    public func decode(_ data: Data, options: ImageDecodingOptions, context: ImageContext) throws -> Image {
        try decode(data, options: options)
    }

    /// An incremental decoder made without looking at the context.
    public func makeIncrementalDecoder(options: ImageDecodingOptions, context: ImageContext) -> (any IncrementalImageDecoder)? {
        makeIncrementalDecoder(options: options)
    }
}

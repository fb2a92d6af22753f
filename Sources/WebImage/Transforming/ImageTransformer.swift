import Foundation

/// Turns an image into another (SDWebImage's `SDImageTransformer`).
///
/// `key` identifies the transformation in cache keys (see `CacheKeys.transformedKey`) and must be
/// stable across runs: equal keys mean equal output. `transform(_:)` is synchronous CPU work;
/// large images are processed on several cores at once.
public protocol ImageTransformer: Sendable {
    /// The cache-key fragment, e.g. `FlippingTransformer(1,0)`.
    var key: String { get }
    /// The transformed image. Animated images have every frame transformed, durations and loop
    /// count kept (whether to transform an animated image at all is the caller's choice).
    /// - Throws: `ImageError.transformFailed` for invalid parameters or an empty result.
    func transform(_ image: Image) throws -> Image
}

/// A transformer that works one frame at a time.
public protocol BitmapTransformer: ImageTransformer {
    /// The transformed pixels of one frame.
    func transform(_ bitmap: Bitmap) throws -> Bitmap
}

extension BitmapTransformer {
    /// Applies `transform(_: Bitmap)` to every frame.
    public func transform(_ image: Image) throws -> Image {
        if !image.isAnimated {
            return Image(bitmap: try transform(image.bitmap), format: image.format, scale: image.scale)
        }
        let frames = try image.allFrames().map { ImageFrame(bitmap: try transform($0.bitmap), duration: $0.duration) }
        return Image(frames: frames, loopCount: image.declaredLoopCount, format: image.format, scale: image.scale)
    }
}

/// Applies transformers in order (SDWebImage's `SDImagePipelineTransformer`).
public struct PipelineTransformer: ImageTransformer {
    /// The transformers, first applied first.
    public let transformers: [any ImageTransformer]

    /// A pipeline of `transformers`, applied in order.
    public init(_ transformers: [any ImageTransformer]) { self.transformers = transformers }

    /// The parts' keys joined with `-`.
    public var key: String { transformers.map(\.key).joined(separator: CacheKeys.separator) }

    public func transform(_ image: Image) throws -> Image {
        try transformers.reduce(image) { try $1.transform($0) }
    }
}

/// Formats numbers in keys as SDWebImage does (`%f`: six decimals).
enum KeyFormat {
    static func number(_ value: Double) -> String { String(format: "%f", value) }
}

/// Checks shared by the transformers' parameters.
enum TransformCheck {
    static func finite(_ value: Double, _ name: String) throws {
        guard value.isFinite else { throw ImageError.transformFailed("\(name) must be a finite number, not \(value)") }
    }
}

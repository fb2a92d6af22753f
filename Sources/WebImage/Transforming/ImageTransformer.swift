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
    /// Applies `transform(_: Bitmap)` to every frame. An animation whose frames are in memory
    /// gets its frames transformed now; one whose frames are decoded on demand gets them
    /// transformed on demand too (frame 0 now), so that transforming an animation holds one
    /// canvas, not every frame. A cancelled task stops between frames with `CancellationError`.
    public func transform(_ image: Image) throws -> Image {
        // The colour description goes with the pixels (a `.original` image keeps its profile).
        var result = try transformFrames(image)
        result.colorInfo = image.colorInfo
        return result
    }

    private func transformFrames(_ image: Image) throws -> Image {
        if !image.isAnimated {
            // Transformers work in 8 bits: a deep image is rounded once, here (DocC "Formats").
            return Image(bitmap: try transform(image.bitmap.converted(to: .rgba8)), format: image.format, scale: image.scale)
        }
        if case .lazy = image.frames {
            let first = try transform(image.bitmap)
            let renderer = TransformedFrames(source: image, transformer: self)
            return Image(firstFrame: ImageFrame(bitmap: first, duration: image.firstFrame.duration),
                         frames: .lazy(LazyFrames(renderer: renderer, durations: image.frameDurations,
                                                         retainedCost: image.memoryCost, finish: { $0 })),
                         format: image.format, loopCount: image.declaredLoopCount, scale: image.scale,
                         exifOrientation: nil, orientationApplied: false)
        }
        let frames = try (0..<image.frameCount).map { index in
            if Task.isCancelled { throw CancellationError() }
            let frame = try image.frame(at: index)
            return ImageFrame(bitmap: try transform(frame.bitmap), duration: frame.duration)
        }
        return Image(frames: frames, loopCount: image.declaredLoopCount, format: image.format, scale: image.scale)
    }
}

/// The frames of an animation passed through a transformer when they are asked for.
final class TransformedFrames<Transformer: BitmapTransformer>: FrameRenderer {
    let source: Image
    let transformer: Transformer

    init(source: Image, transformer: Transformer) {
        self.source = source
        self.transformer = transformer
    }

    func render(_ index: Int) throws -> Bitmap {
        if Task.isCancelled { throw CancellationError() }
        return try transformer.transform(source.frame(at: index).bitmap)
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

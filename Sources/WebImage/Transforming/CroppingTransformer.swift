/// Crops to a rectangle (SDWebImage's `SDImageCroppingTransformer`). The rectangle is in pixels,
/// widened to whole pixels and clamped to the image; a rectangle that misses the image fails.
public struct CroppingTransformer: BitmapTransformer {
    /// The crop rectangle in pixels (origin at the top left).
    public let x: Double, y: Double, width: Double, height: Double

    /// Crop to the rectangle at (`x`, `y`) of `width` x `height` pixels.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var key: String {
        let numbers = [x, y, width, height].map(KeyFormat.number).joined(separator: ",")
        return "CroppingTransformer({" + numbers + "})"
    }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        for (value, name) in [(x, "x"), (y, "y"), (width, "width"), (height, "height")] { try TransformCheck.finite(value, name) }
        guard width > 0, height > 0 else { throw ImageError.transformFailed("the crop rectangle is empty") }
        let x0 = max(0, Int(x.rounded(.down))), y0 = max(0, Int(y.rounded(.down)))
        let x1 = min(bitmap.width, Int((x + width).rounded(.up))), y1 = min(bitmap.height, Int((y + height).rounded(.up)))
        guard x0 < x1, y0 < y1 else {
            throw ImageError.transformFailed("the crop rectangle lies outside the \(bitmap.width)x\(bitmap.height) image")
        }
        if x0 == 0, y0 == 0, x1 == bitmap.width, y1 == bitmap.height { return bitmap }
        let w = x1 - x0, h = y1 - y0
        let storage = PixelStorage(uninitializedCount: w * h * 4)
        bitmap.withUnsafeBytes { src in
            for row in 0..<h {
                (storage.pointer + row * w * 4).update(from: src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    + ((y0 + row) * bitmap.width + x0) * 4, count: w * 4)
            }
        }
        return Bitmap(width: w, height: h, storage: storage)
    }
}

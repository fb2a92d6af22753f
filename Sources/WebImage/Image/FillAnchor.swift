/// Where a fill box sits in the image that fills it, when the load keeps only the box
/// (`ImageContext.fillAnchor`, `ImageDecodingOptions.fillAnchor`): Nuke's `Resize(crop: true)`
/// and imgproxy's fill with a compass gravity, done as the image is decoded.
///
/// `x` and `y` go from 0 (the left or top edge) to 1 (the right or bottom edge); the box's
/// top-left corner is at `x` and `y` times the room left on each side, rounded to the nearest
/// pixel. `.center` is (0.5, 0.5).
public struct FillAnchor: Sendable, Hashable {
    /// Across: 0 the left edge, 0.5 the middle, 1 the right edge.
    public var x: Double
    /// Down: 0 the top edge, 0.5 the middle, 1 the bottom edge.
    public var y: Double

    /// The anchor at `x`, `y`, each clamped to 0...1 (a value that is not finite is the middle).
    public init(x: Double, y: Double) {
        func clamped(_ value: Double) -> Double { value.isFinite ? min(1, max(0, value)) : 0.5 }
        self.x = clamped(x)
        self.y = clamped(y)
    }

    /// The middle of the image.
    public static let center = FillAnchor(x: 0.5, y: 0.5)

    /// The rectangle of `box` in an image of `width` x `height` that is the smallest to fill it
    /// (as large as the box on both sides, and equal to it on one); nil when the image is not
    /// (smaller on a side, larger on both, or the box itself): such an image is kept whole.
    package func cut(_ box: PixelSize, width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int)? {
        guard box.width > 0, box.height > 0, width >= box.width, height >= box.height,
              width == box.width || height == box.height, width > box.width || height > box.height else { return nil }
        let left = Int((x * Double(width - box.width)).rounded()), top = Int((y * Double(height - box.height)).rounded())
        return (left, top, box.width, box.height)
    }

    /// `bitmap` cut to `box` at this anchor, or itself when `cut` keeps it whole.
    package func cut(_ bitmap: Bitmap, to box: PixelSize) -> Bitmap {
        guard let rect = cut(box, width: bitmap.width, height: bitmap.height) else { return bitmap }
        let pixel = bitmap.pixelFormat.bytesPerPixel, rowBytes = rect.width * pixel
        let storage = PixelStorage(uninitializedCount: rowBytes * rect.height)
        bitmap.withUnsafeBytes { source in
            for row in 0..<rect.height {
                let from = ((rect.y + row) * bitmap.width + rect.x) * pixel
                (storage.pointer + row * rowBytes).update(from: source.baseAddress!.assumingMemoryBound(to: UInt8.self) + from,
                                                          count: rowBytes)
            }
        }
        return Bitmap(width: rect.width, height: rect.height, storage: storage, isPremultiplied: bitmap.isPremultiplied,
                      pixelFormat: bitmap.pixelFormat)
    }
}

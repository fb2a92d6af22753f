/// Crops to `width` x `height` pixels where the image draws the eye most: edges, skin tones and
/// saturated colours, as libvips's `smartcrop` with the `attention` strategy (imgproxy's and
/// thumbor's smart crop). A side larger than the image keeps the image's.
public struct SmartCroppingTransformer: BitmapTransformer {
    /// The crop's size in pixels.
    public let width: Int, height: Int

    /// A smart crop to `width` x `height` pixels (each at least 1).
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var key: String { "SmartCroppingTransformer(\(width),\(height))" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        guard width > 0, height > 0 else { throw ImageError.transformFailed("the smart crop \(width)x\(height) is empty") }
        let (w, h) = (min(width, bitmap.width), min(height, bitmap.height))
        guard w < bitmap.width || h < bitmap.height else { return bitmap }
        let (x, y) = try AttentionCrop.origin(of: w, h, in: bitmap)
        return try CroppingTransformer(x: Double(x), y: Double(y), width: Double(w), height: Double(h)).transform(bitmap)
    }
}

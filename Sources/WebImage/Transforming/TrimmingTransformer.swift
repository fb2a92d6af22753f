/// Removes the borders of one colour (imgproxy's `trim`): the rows and columns at the edges
/// whose every pixel is within `threshold` of `color` (each of R, G, B and A), by default the
/// top-left pixel's. With `equalHorizontal` the left and right cuts are the smaller of the two,
/// with `equalVertical` the top and bottom ones. An image that is all border is left as it is.
public struct TrimmingTransformer: BitmapTransformer {
    /// How far (0 to 255, per channel) a pixel may be from the border's colour and still be border.
    public let threshold: Double
    /// The border's colour (nil: the top-left pixel's).
    public let color: Color?
    /// Whether the left and right cuts are the smaller of the two, and the top and bottom ones.
    public let equalHorizontal: Bool, equalVertical: Bool

    /// The trim; every argument has the documented meaning.
    public init(threshold: Double, color: Color? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false) {
        self.threshold = threshold
        self.color = color
        self.equalHorizontal = equalHorizontal
        self.equalVertical = equalVertical
    }

    public var key: String {
        "TrimmingTransformer(\(KeyFormat.number(threshold)),\(color?.hexString ?? "corner"),\(equalHorizontal),\(equalVertical))"
    }

    /// The rectangle kept (x, y, width, height), or nil when the image is all border.
    public func bounds(of bitmap: Bitmap) -> (x: Int, y: Int, width: Int, height: Int)? {
        let (w, h) = (bitmap.width, bitmap.height)
        return bitmap.withUnsafeBytes { raw -> (Int, Int, Int, Int)? in
            let pixels = raw.bindMemory(to: SIMD4<UInt8>.self)
            let reference: SIMD4<Float> = color.map {
                SIMD4(Float($0.red * 255), Float($0.green * 255), Float($0.blue * 255), Float($0.alpha * 255))
            } ?? PixelMath.float(pixels[0])
            let limit = Float(threshold)
            func differs(_ x: Int, _ y: Int) -> Bool {
                let d = PixelMath.float(pixels[y * w + x]) - reference
                return max(max(abs(d.x), abs(d.y)), max(abs(d.z), abs(d.w))) > limit
            }
            guard let top = (0..<h).first(where: { y in (0..<w).contains { differs($0, y) } }) else { return nil }
            let bottom = (top..<h).last { y in (0..<w).contains { differs($0, y) } }!
            let left = (0..<w).first { x in (top...bottom).contains { differs(x, $0) } }!
            let right = (left..<w).last { x in (top...bottom).contains { differs(x, $0) } }!
            var (x0, x1, y0, y1) = (left, right + 1, top, bottom + 1)
            if equalHorizontal { let cut = min(x0, w - x1); (x0, x1) = (cut, w - cut) }
            if equalVertical { let cut = min(y0, h - y1); (y0, y1) = (cut, h - cut) }
            return (x0, y0, x1 - x0, y1 - y0)
        }
    }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        try TransformCheck.finite(threshold, "threshold")
        guard let rect = bounds(of: bitmap), rect.width != bitmap.width || rect.height != bitmap.height else { return bitmap }
        return try CroppingTransformer(x: Double(rect.x), y: Double(rect.y), width: Double(rect.width), height: Double(rect.height))
            .transform(bitmap)
    }
}

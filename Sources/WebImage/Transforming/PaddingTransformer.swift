/// Space added around the image in a colour (transparent by default): imgproxy's `padding`,
/// and its `extend` once the offsets are known (the image placed on a larger canvas).
public struct PaddingTransformer: BitmapTransformer {
    /// The pixels added on each side.
    public let top: Int, right: Int, bottom: Int, left: Int
    /// The colour of the added space.
    public let color: Color

    /// Pads by these many pixels on each side (none negative), in `color`.
    public init(top: Int, right: Int, bottom: Int, left: Int, color: Color = .clear) {
        (self.top, self.right, self.bottom, self.left) = (top, right, bottom, left)
        self.color = color
    }

    public var key: String { "PaddingTransformer(\(top),\(right),\(bottom),\(left),\(color.hexString))" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        guard [top, right, bottom, left].allSatisfy({ $0 >= 0 }) else { throw ImageError.transformFailed("a padding is negative") }
        guard top > 0 || right > 0 || bottom > 0 || left > 0 else { return bitmap }
        let (w, h) = (bitmap.width + left + right, bitmap.height + top + bottom)
        let (area, overflow) = w.multipliedReportingOverflow(by: h)
        guard !overflow, area <= Int(Int32.max) / 4 else { throw ImageError.transformFailed("the padded image would be \(w)x\(h)") }
        let fill = SIMD4<UInt8>(UInt8((color.red * 255).rounded()), UInt8((color.green * 255).rounded()),
                                UInt8((color.blue * 255).rounded()), UInt8((color.alpha * 255).rounded()))
        let storage = PixelStorage(uninitializedCount: area * 4)
        let out = UnsafeMutableRawPointer(storage.pointer).bindMemory(to: SIMD4<UInt8>.self, capacity: area)
        out.initialize(repeating: fill, count: area)
        bitmap.withUnsafeBytes { raw in
            let src = raw.bindMemory(to: SIMD4<UInt8>.self)
            for y in 0..<bitmap.height {
                (out + (y + top) * w + left).update(from: src.baseAddress! + y * bitmap.width, count: bitmap.width)
            }
        }
        return Bitmap(width: w, height: h, storage: storage)
    }
}

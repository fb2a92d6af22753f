/// Converts to grey with ITU-R 601-2 luma (the weights and rounding of Pillow's `convert("L")`),
/// alpha kept.
public struct GrayscaleTransformer: BitmapTransformer {
    /// The grayscale transformer.
    public init() {}

    public var key: String { "GrayscaleTransformer" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        var out = bitmap
        out.updatePixels { p in
            let r: UInt32 = UInt32(p.x) * 19595, g: UInt32 = UInt32(p.y) * 38470, b: UInt32 = UInt32(p.z) * 7471
            let luma = UInt8((r + g + b + 0x8000) >> 16)
            p = SIMD4(luma, luma, luma, p.w)
        }
        return out
    }
}

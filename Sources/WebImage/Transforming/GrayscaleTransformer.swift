/// Converts to grey with ITU-R 601-2 luma (the weights and rounding of Pillow's `convert("L")`),
/// alpha kept.
public struct GrayscaleTransformer: BitmapTransformer {
    /// The grayscale transformer.
    public init() {}

    public var key: String { "GrayscaleTransformer" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        var out = bitmap
        out.withUnsafeMutableBytes { raw in
            let p = raw.bindMemory(to: UInt8.self)
            Parallel.rows(p.count / 4, grain: 262_144) { range in
                for i in range {
                    let o = i * 4
                    let luma = (UInt32(p[o]) * 19595 + UInt32(p[o + 1]) * 38470 + UInt32(p[o + 2]) * 7471 + 0x8000) >> 16
                    let l = UInt8(luma)
                    p[o] = l; p[o + 1] = l; p[o + 2] = l
                }
            }
        }
        return out
    }
}

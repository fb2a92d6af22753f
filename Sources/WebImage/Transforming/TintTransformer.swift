/// Tints with a colour drawn source-atop: where the image is, the colour covers it by the
/// colour's alpha; transparency is kept (SDWebImage's `SDImageTintTransformer`).
public struct TintTransformer: BitmapTransformer {
    /// The tint colour; its alpha is the strength.
    public let color: Color

    /// Tint with `color` (its alpha is the strength).
    public init(color: Color) { self.color = color }

    public var key: String { "TintTransformer(\(color.hexString))" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        let ta = Float(color.alpha)
        let tint = SIMD3<Float>(Float(color.red), Float(color.green), Float(color.blue)) * 255 * ta
        var out = bitmap
        out.updatePixels { p in
            let c = SIMD3<Float>(Float(p.x), Float(p.y), Float(p.z)) * (1 - ta) + tint + 0.5
            p = SIMD4(UInt8(min(255, c.x)), UInt8(min(255, c.y)), UInt8(min(255, c.z)), p.w)
        }
        return out
    }
}

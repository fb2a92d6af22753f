/// Tints with a colour drawn source-atop: where the image is, the colour covers it by the
/// colour's alpha; transparency is kept (SDWebImage's `SDImageTintTransformer`).
public struct TintTransformer: BitmapTransformer {
    public let color: Color

    /// Tint with `color` (its alpha is the strength).
    public init(color: Color) { self.color = color }

    public var key: String { "TintTransformer(\(color.hexString))" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        let ta = Float(color.alpha)
        let tint = SIMD3<Float>(Float(color.red), Float(color.green), Float(color.blue)) * 255 * ta
        var out = bitmap
        out.withUnsafeMutableBytes { raw in
            let p = raw.bindMemory(to: UInt8.self)
            Parallel.rows(p.count / 4, grain: 262_144) { range in
                for i in range {
                    let o = i * 4
                    let c = SIMD3<Float>(Float(p[o]), Float(p[o + 1]), Float(p[o + 2])) * (1 - ta) + tint + 0.5
                    p[o] = UInt8(min(255, c.x)); p[o + 1] = UInt8(min(255, c.y)); p[o + 2] = UInt8(min(255, c.z))
                }
            }
        }
        return out
    }
}

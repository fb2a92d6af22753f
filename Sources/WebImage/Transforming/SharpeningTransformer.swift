/// Unsharp mask: each channel moves away from its Gaussian-blurred neighbourhood by `amount`
/// (Pillow's `UnsharpMask(radius: sigma, percent: amount * 100, threshold: 0)`; what imgproxy's
/// `sharpen` and thumbor's `sharpen` filter do after a downscale). Alpha is kept.
public struct SharpeningTransformer: BitmapTransformer {
    /// The blur's standard deviation in pixels.
    public let sigma: Double
    /// How far past the blur each value is pushed (1: by the whole difference).
    public let amount: Double

    /// Sharpen with a Gaussian of `sigma` pixels, by `amount`.
    public init(sigma: Double, amount: Double = 1) {
        self.sigma = sigma
        self.amount = amount
    }

    public var key: String { "SharpeningTransformer(\(KeyFormat.number(sigma)),\(KeyFormat.number(amount)))" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        try TransformCheck.finite(sigma, "sigma")
        try TransformCheck.finite(amount, "amount")
        guard sigma > 0, amount != 0 else { return bitmap }
        let blurred = try BlurTransformer(radius: sigma).transform(bitmap)
        var out = bitmap
        let k = Float(amount)
        blurred.withUnsafeBytes { raw in
            let soft = raw.bindMemory(to: SIMD4<UInt8>.self)
            out.withUnsafeMutableBytes { target in
                let pixels = target.bindMemory(to: SIMD4<UInt8>.self)
                Parallel.rows(pixels.count, grain: 262_144) { range in
                    for i in range {
                        let p = PixelMath.float(pixels[i]), b = PixelMath.float(soft[i])
                        let v = p + (p - b) * k + 0.5
                        let c = v.clamped(lowerBound: SIMD4(repeating: 0), upperBound: SIMD4(repeating: 255))
                        pixels[i] = SIMD4(UInt8(c.x), UInt8(c.y), UInt8(c.z), pixels[i].w)
                    }
                }
            }
        }
        return out
    }
}

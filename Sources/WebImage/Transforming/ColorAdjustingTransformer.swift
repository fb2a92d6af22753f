/// Brightness, contrast and saturation, in that order, on each pixel's colour (alpha kept):
/// `brightness` is added to every channel (-255 to 255), `contrast` scales each channel's
/// distance from mid-grey (128), `saturation` each channel's distance from the pixel's luma
/// (ITU-R 601: 0.299 R + 0.587 G + 0.114 B, Pillow's `ImageEnhance.Color`). 0, 1 and 1 change
/// nothing. imgproxy's `adjust` and thumbor's `brightness`, `contrast` and `saturation`.
public struct ColorAdjustingTransformer: BitmapTransformer {
    /// Added to each channel, -255 to 255 (0: unchanged).
    public let brightness: Double
    /// Each channel's distance from mid-grey multiplied by it (1: unchanged).
    public let contrast: Double
    /// Each channel's distance from the pixel's luma multiplied by it (1: unchanged, 0: grey).
    public let saturation: Double

    /// The adjustment; every argument has the documented meaning.
    public init(brightness: Double = 0, contrast: Double = 1, saturation: Double = 1) {
        self.brightness = brightness
        self.contrast = contrast
        self.saturation = saturation
    }

    public var key: String {
        "ColorAdjustingTransformer(\(KeyFormat.number(brightness)),\(KeyFormat.number(contrast)),\(KeyFormat.number(saturation)))"
    }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        for (value, name) in [(brightness, "brightness"), (contrast, "contrast"), (saturation, "saturation")] {
            try TransformCheck.finite(value, name)
        }
        guard brightness != 0 || contrast != 1 || saturation != 1 else { return bitmap }
        let (add, c, s) = (Float(brightness), Float(contrast), Float(saturation))
        let weights = SIMD3<Float>(0.299, 0.587, 0.114)
        var out = bitmap
        out.updatePixels { p in
            var v = SIMD3<Float>(Float(p.x), Float(p.y), Float(p.z))
            v = (v + add).clamped(lowerBound: SIMD3(repeating: 0), upperBound: SIMD3(repeating: 255))
            v = ((v - 128) * c + 128).clamped(lowerBound: SIMD3(repeating: 0), upperBound: SIMD3(repeating: 255))
            let luma = (v * weights).sum()
            v = ((v - luma) * s + luma + 0.5).clamped(lowerBound: SIMD3(repeating: 0), upperBound: SIMD3(repeating: 255))
            p = SIMD4(UInt8(v.x), UInt8(v.y), UInt8(v.z), p.w)
        }
        return out
    }
}

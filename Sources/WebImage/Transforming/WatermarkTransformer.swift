import Foundation

/// Draws a watermark over the image, source-over with `opacity`: at one place (its top-left
/// corner at `x`, `y`, parts outside the image cut off), or repeated from the top-left corner
/// over the whole image. imgproxy's and thumbor's `watermark`.
public struct WatermarkTransformer: BitmapTransformer {
    /// Where the watermark goes.
    public enum Placement: Sendable, Hashable {
        /// Its top-left corner at these pixels of the image.
        case at(x: Int, y: Int)
        /// Repeated in a grid over the whole image.
        case tiled
    }

    /// The watermark's pixels.
    public let mark: Bitmap
    public let placement: Placement
    /// 0 to 1: the watermark's alpha is multiplied by it.
    public let opacity: Double

    /// Draws `mark` at `placement` with `opacity`.
    public init(mark: Bitmap, placement: Placement, opacity: Double = 1) {
        self.mark = mark
        self.placement = placement
        self.opacity = opacity
    }

    public var key: String {
        let place = switch placement {
        case .at(let x, let y): "\(x),\(y)"
        case .tiled: "tiled"
        }
        return "WatermarkTransformer(\(mark.width)x\(mark.height),\(Digest.sha256(Data(mark.rgba)).prefix(16)),\(place),\(KeyFormat.number(opacity)))"
    }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        try TransformCheck.finite(opacity, "opacity")
        guard opacity > 0, mark.width > 0, mark.height > 0 else { return bitmap }
        let k = Float(min(1, opacity)) / 255
        var out = bitmap
        let (w, h, mw, mh) = (bitmap.width, bitmap.height, mark.width, mark.height)
        let origins: [(Int, Int)] = switch placement {
        case .at(let x, let y): [(x, y)]
        case .tiled: stride(from: 0, to: h, by: mh).flatMap { y in stride(from: 0, to: w, by: mw).map { ($0, y) } }
        }
        mark.withUnsafeBytes { raw in
            let src = raw.bindMemory(to: SIMD4<UInt8>.self)
            out.withUnsafeMutableBytes { target in
                let dst = target.bindMemory(to: SIMD4<UInt8>.self)
                for (ox, oy) in origins {
                    for my in max(0, -oy)..<min(mh, h - oy) {
                        for mx in max(0, -ox)..<min(mw, w - ox) {
                            let s = src[my * mw + mx]
                            let a = Float(s.w) * k
                            guard a > 0 else { continue }
                            let i = (oy + my) * w + ox + mx
                            let d = dst[i]
                            // Source-over in straight alpha.
                            let da = Float(d.w) / 255
                            let outA = a + da * (1 - a)
                            let mix = (PixelMath.float(s) * a + PixelMath.float(d) * da * (1 - a)) / max(outA, 1e-6)
                            dst[i] = SIMD4(UInt8(min(255, mix.x + 0.5)), UInt8(min(255, mix.y + 0.5)), UInt8(min(255, mix.z + 0.5)),
                                           UInt8(min(255, outA * 255 + 0.5)))
                        }
                    }
                }
            }
        }
        return out
    }
}

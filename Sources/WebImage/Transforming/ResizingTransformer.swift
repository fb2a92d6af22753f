/// Resizes to a target size (SDWebImage's `SDImageResizingTransformer`), with Lanczos-3
/// resampling in premultiplied alpha. The result is always `width` x `height`:
/// `.fill` stretches, `.aspectFit` fits inside with transparent margins, `.aspectFill` covers
/// and crops the centre.
public struct ResizingTransformer: BitmapTransformer {
    /// How the image meets the target size (raw values as SDWebImage's `SDImageScaleMode`).
    public enum ScaleMode: Int, Sendable {
        case fill = 0, aspectFit = 1, aspectFill = 2
    }

    /// The target width in pixels.
    public let width: Double
    /// The target height in pixels.
    public let height: Double
    /// How the image fits the target size.
    public let scaleMode: ScaleMode

    /// Resize to `width` x `height` pixels with `scaleMode`.
    public init(width: Double, height: Double, scaleMode: ScaleMode = .fill) {
        self.width = width
        self.height = height
        self.scaleMode = scaleMode
    }

    public var key: String {
        "ResizingTransformer({\(KeyFormat.number(width)),\(KeyFormat.number(height))},\(scaleMode.rawValue))"
    }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        try TransformCheck.finite(width, "width")
        try TransformCheck.finite(height, "height")
        let tw = Int(width.rounded()), th = Int(height.rounded())
        guard tw >= 1, th >= 1 else { throw ImageError.transformFailed("the target size \(width)x\(height) is empty") }
        guard tw * th <= ImageDecodingOptions.defaultPixelLimit else {
            throw ImageError.transformFailed("the target size \(tw)x\(th) is over \(ImageDecodingOptions.defaultPixelLimit) pixels")
        }
        let w = Double(bitmap.width), h = Double(bitmap.height)
        switch scaleMode {
        case .fill:
            return Resampler.resize(bitmap, window: (0, 0, w, h), targetWidth: tw, targetHeight: th)
        case .aspectFill:
            let scale = max(Double(tw) / w, Double(th) / h)
            let ww = Double(tw) / scale, wh = Double(th) / scale
            return Resampler.resize(bitmap, window: ((w - ww) / 2, (h - wh) / 2, ww, wh), targetWidth: tw, targetHeight: th)
        case .aspectFit:
            let scale = min(Double(tw) / w, Double(th) / h)
            let sw = min(tw, max(1, Int((w * scale).rounded()))), sh = min(th, max(1, Int((h * scale).rounded())))
            let scaled = Resampler.resize(bitmap, window: (0, 0, w, h), targetWidth: sw, targetHeight: sh)
            if sw == tw && sh == th { return scaled }
            var canvas = Bitmap(width: tw, height: th)
            canvas.paste(scaled, atX: (tw - sw) / 2, y: (th - sh) / 2)
            return canvas
        }
    }
}

extension Bitmap {
    /// Copies `other` into this bitmap with its top-left corner at (x, y), clipped.
    mutating func paste(_ other: Bitmap, atX x: Int, y: Int) {
        let w = width, h = height
        withUnsafeMutableBytes { dst in
            other.withUnsafeBytes { src in
                for row in 0..<other.height {
                    let ty = y + row
                    guard ty >= 0, ty < h else { continue }
                    let x0 = max(0, x), x1 = min(w, x + other.width)
                    guard x0 < x1 else { return }
                    (dst.baseAddress! + (ty * w + x0) * 4).copyMemory(from: src.baseAddress! + (row * other.width + (x0 - x)) * 4,
                                                                     byteCount: (x1 - x0) * 4)
                }
            }
        }
    }
}

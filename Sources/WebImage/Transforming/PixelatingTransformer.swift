/// Pixelation: the image in blocks of `size` pixels, each the average of the pixels it covers
/// (blocks at the right and bottom edges cover what is left), as imgproxy's `pixelate` and
/// Pillow's `resize(BOX)` then `resize(NEAREST)` do. Averages are alpha-weighted.
public struct PixelatingTransformer: BitmapTransformer {
    /// The side of a block in pixels.
    public let size: Int

    /// Blocks of `size` x `size` pixels (1 leaves the image as it is).
    public init(size: Int) { self.size = size }

    public var key: String { "PixelatingTransformer(\(size))" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        guard size > 0 else { throw ImageError.transformFailed("the pixelate size \(size) is not positive") }
        guard size > 1 else { return bitmap }
        var out = bitmap
        let (w, h, n) = (bitmap.width, bitmap.height, size)
        out.withUnsafeMutableBytes { raw in
            let pixels = raw.bindMemory(to: SIMD4<UInt8>.self)
            let bands = (h + n - 1) / n
            Parallel.rows(bands, grain: max(1, 65_536 / max(1, w * n))) { range in
                for band in range {
                    let y0 = band * n, y1 = min(h, y0 + n)
                    var x0 = 0
                    while x0 < w {
                        let x1 = min(w, x0 + n)
                        var sum = SIMD4<Float>.zero
                        for y in y0..<y1 { for x in x0..<x1 { sum += PixelMath.premultiplied(pixels[y * w + x]) } }
                        let mean = PixelMath.unpremultiplied(sum / Float((x1 - x0) * (y1 - y0)))
                        for y in y0..<y1 { for x in x0..<x1 { pixels[y * w + x] = mean } }
                        x0 = x1
                    }
                }
            }
        }
        return out
    }
}

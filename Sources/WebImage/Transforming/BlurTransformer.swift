import Foundation

/// Gaussian blur (SDWebImage's `SDImageBlurTransformer`). `radius` is the Gaussian's standard
/// deviation in pixels, as Pillow's `GaussianBlur(radius)` reads it; the blur is three
/// successive box blurs (the classic approximation), each O(1) per pixel whatever the radius,
/// in premultiplied alpha, with edge pixels extended.
public struct BlurTransformer: BitmapTransformer {
    /// The blur radius in pixels.
    public let radius: Double

    /// Blur with standard deviation `radius` pixels (0 leaves the image as it is).
    public init(radius: Double) { self.radius = radius }

    public var key: String { "BlurTransformer(\(KeyFormat.number(radius)))" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        try TransformCheck.finite(radius, "radius")
        guard radius >= 0 else { throw ImageError.transformFailed("the blur radius \(radius) is negative") }
        guard radius > 0 else { return bitmap }
        var buffer = PixelBuffer(bitmap)
        let boxes = BlurTransformer.boxRadii(sigma: radius, passes: 3)
        let (w, h) = (buffer.width, buffer.height)
        buffer.pixels.withUnsafeMutableBufferPointer { pixels in
            let image = pixels.baseAddress!
            // Horizontal: the three passes on each row while it is in cache.
            Parallel.rows(h, grain: max(1, 16_384 / w)) { rows in
                let a = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: w)
                defer { a.deallocate() }
                for y in rows {
                    let row = image + y * w
                    for r in boxes {
                        a.update(from: row, count: w)
                        BlurTransformer.box(a, count: w, stride: 1, radius: r, into: row, outStride: 1)
                    }
                }
            }
            // Vertical: running sums over whole rows, so memory is read row after row.
            Parallel.rows(w, grain: 64) { columns in
                let scratch = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: h * columns.count)
                defer { scratch.deallocate() }
                for r in boxes {
                    BlurTransformer.verticalBox(image, width: w, height: h, columns: columns, radius: r, scratch: scratch)
                }
            }
        }
        return buffer.bitmap()
    }

    /// A running-sum box blur of half-width `radius` along one line (edges extended).
    static func box(_ src: UnsafeMutablePointer<SIMD4<Float>>, count: Int, stride: Int, radius: Int,
                    into dst: UnsafeMutablePointer<SIMD4<Float>>, outStride: Int) {
        guard radius > 0 else {
            for i in 0..<count { dst[i * outStride] = src[i * stride] }
            return
        }
        let scale = 1 / Float(2 * radius + 1)
        let first = src[0], last = src[(count - 1) * stride]
        @inline(__always) func px(_ i: Int) -> SIMD4<Float> { i < 0 ? first : (i >= count ? last : src[i * stride]) }
        var sum = SIMD4<Float>.zero
        for i in -radius...radius { sum += px(i) }
        for i in 0..<count {
            dst[i * outStride] = sum * scale
            sum += px(i + radius + 1) - px(i - radius)
        }
    }

    /// The box pass down the columns `columns` of the image, in place: the column stripe is
    /// copied out row by row, then summed with one accumulator per column.
    static func verticalBox(_ image: UnsafeMutablePointer<SIMD4<Float>>, width: Int, height: Int, columns: Range<Int>,
                            radius: Int, scratch: UnsafeMutablePointer<SIMD4<Float>>) {
        guard radius > 0 else { return }
        let n = columns.count, x0 = columns.lowerBound
        for y in 0..<height { (scratch + y * n).update(from: image + y * width + x0, count: n) }
        let scale = 1 / Float(2 * radius + 1)
        let sums = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: n)
        defer { sums.deallocate() }
        @inline(__always) func row(_ y: Int) -> UnsafeMutablePointer<SIMD4<Float>> { scratch + min(height - 1, max(0, y)) * n }
        sums.initialize(repeating: .zero, count: n)
        for y in -radius...radius {
            let r = row(y)
            for i in 0..<n { sums[i] += r[i] }
        }
        for y in 0..<height {
            let out = image + y * width + x0
            let add = row(y + radius + 1), remove = row(y - radius)
            for i in 0..<n {
                out[i] = sums[i] * scale
                sums[i] += add[i] - remove[i]
            }
        }
    }

    /// Half-widths of `passes` box filters whose succession approximates a Gaussian of `sigma`.
    static func boxRadii(sigma: Double, passes: Int) -> [Int] {
        let n = Double(passes)
        let ideal = (12 * sigma * sigma / n + 1).squareRoot()
        var lower = Int(ideal.rounded(.down))
        if lower % 2 == 0 { lower -= 1 }
        let upper = lower + 2
        let m = ((12 * sigma * sigma - n * Double(lower * lower) - 4 * n * Double(lower) - 3 * n) / (-4 * Double(lower) - 4)).rounded()
        return (0..<passes).map { Double($0) < m ? max(0, (lower - 1) / 2) : (upper - 1) / 2 }
    }
}

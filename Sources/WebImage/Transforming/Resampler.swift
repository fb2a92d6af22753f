import Foundation

/// Separable Lanczos-3 resampling in premultiplied alpha, with the same kernel placement as
/// Pillow's `resize(LANCZOS)`: the kernel widens with the reduction factor, so downscaling
/// averages every source pixel (no aliasing) and upscaling interpolates.
enum Resampler {
    /// For each output index: the first source index, how many follow, and their weights.
    struct Kernel {
        var starts: [Int] = []
        var counts: [Int] = []
        var weights: [Float] = []
        var stride = 0

        /// Maps the source window `[windowStart, windowStart + windowLength)` of a `sourceSize`
        /// axis onto `targetSize` outputs.
        init(sourceSize: Int, windowStart: Double, windowLength: Double, targetSize: Int) {
            let scale = windowLength / Double(targetSize)
            let filterScale = max(scale, 1)
            let support = 3 * filterScale
            stride = Int(support.rounded(.up)) * 2 + 2
            weights = [Float](repeating: 0, count: stride * targetSize)
            for i in 0..<targetSize {
                let center = windowStart + (Double(i) + 0.5) * scale
                let lo = max(0, Int(center - support + 0.5))
                let hi = min(sourceSize, Int(center + support + 0.5))
                var values: [Double] = []
                var total = 0.0
                for j in lo..<max(lo, hi) {
                    let w = Kernel.lanczos3((Double(j) - center + 0.5) / filterScale)
                    values.append(w)
                    total += w
                }
                if values.isEmpty || total == 0 {
                    // Degenerate window (outside the source): nearest pixel.
                    let nearest = min(sourceSize - 1, max(0, Int(center)))
                    starts.append(nearest)
                    counts.append(1)
                    weights[i * stride] = 1
                    continue
                }
                starts.append(lo)
                counts.append(values.count)
                for (k, w) in values.enumerated() where k < stride { weights[i * stride + k] = Float(w / total) }
            }
        }

        static func lanczos3(_ x: Double) -> Double {
            if x == 0 { return 1 }
            if abs(x) >= 3 { return 0 }
            let px = Double.pi * x
            return 3 * sin(px) * sin(px / 3) / (px * px)
        }

        var minStart: Int { starts.min() ?? 0 }
        var maxEnd: Int { zip(starts, counts).map { $0 + $1 }.max() ?? 0 }
    }

    /// `bitmap`'s window `(x, y, width, height)` (in source pixels, may be fractional)
    /// resampled to `targetWidth` x `targetHeight`.
    static func resize(_ bitmap: Bitmap, window: (x: Double, y: Double, width: Double, height: Double),
                       targetWidth: Int, targetHeight: Int) -> Bitmap {
        let kx = Kernel(sourceSize: bitmap.width, windowStart: window.x, windowLength: window.width, targetSize: targetWidth)
        let ky = Kernel(sourceSize: bitmap.height, windowStart: window.y, windowLength: window.height, targetSize: targetHeight)
        let firstRow = ky.minStart, rowCount = ky.maxEnd - firstRow
        let sourceWidth = bitmap.width
        // Horizontal pass over the rows the vertical kernel needs: targetWidth x rowCount.
        let middle = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: targetWidth * max(1, rowCount))
        defer { middle.deallocate() }
        bitmap.withUnsafeBytes { raw in
            let src = raw.bindMemory(to: SIMD4<UInt8>.self).baseAddress!
            kx.starts.withUnsafeBufferPointer { starts in
                kx.counts.withUnsafeBufferPointer { counts in
                    kx.weights.withUnsafeBufferPointer { weights in
                        Parallel.rows(rowCount, grain: max(1, 200_000 / max(1, sourceWidth))) { rows in
                            let line = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: sourceWidth)
                            defer { line.deallocate() }
                            for r in rows {
                                let row = src + (firstRow + r) * sourceWidth
                                for x in 0..<sourceWidth { line[x] = PixelMath.premultiplied(row[x]) }
                                let out = middle + r * targetWidth
                                for i in 0..<targetWidth {
                                    let start = starts[i], count = counts[i]
                                    let w = weights.baseAddress! + i * kx.stride
                                    var acc = SIMD4<Float>.zero
                                    for k in 0..<count { acc += line[start + k] * w[k] }
                                    out[i] = acc
                                }
                            }
                        }
                    }
                }
            }
        }
        // Vertical pass and back to straight alpha.
        let storage = PixelStorage(uninitializedCount: targetWidth * targetHeight * 4)
        let dst = UnsafeMutableRawPointer(storage.pointer).bindMemory(to: SIMD4<UInt8>.self, capacity: targetWidth * targetHeight)
        ky.starts.withUnsafeBufferPointer { starts in
            ky.counts.withUnsafeBufferPointer { counts in
                ky.weights.withUnsafeBufferPointer { weights in
                    Parallel.rows(targetHeight, grain: max(1, 100_000 / max(1, targetWidth))) { rows in
                        let accumulator = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: targetWidth)
                        defer { accumulator.deallocate() }
                        for y in rows {
                            accumulator.update(repeating: .zero, count: targetWidth)
                            let w = weights.baseAddress! + y * ky.stride
                            for k in 0..<counts[y] {
                                let source = middle + (starts[y] + k - firstRow) * targetWidth
                                let weight = w[k]
                                for x in 0..<targetWidth { accumulator[x] += source[x] * weight }
                            }
                            let out = dst + y * targetWidth
                            for x in 0..<targetWidth { out[x] = PixelMath.unpremultiplied(accumulator[x]) }
                        }
                    }
                }
            }
        }
        return Bitmap(width: targetWidth, height: targetHeight, storage: storage)
    }

}

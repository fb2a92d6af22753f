extension Bitmap {
    /// The bitmap reduced to `targetWidth` x `targetHeight` by area averaging (each output pixel
    /// is the coverage-weighted mean of the source pixels under it), in premultiplied alpha so
    /// transparent edges get no dark fringe. Decode-at-size uses it after DCT or codec scaling.
    /// A target larger than the bitmap in either direction returns the bitmap unchanged
    /// (enlarging is a transformer's job). Synchronous CPU work.
    public func areaDownscaled(toWidth targetWidth: Int, height targetHeight: Int) -> Bitmap {
        guard targetWidth > 0, targetHeight > 0, targetWidth <= width, targetHeight <= height,
              targetWidth != width || targetHeight != height else { return self }
        let horizontal = AreaWeights(source: width, target: targetWidth)
        let vertical = AreaWeights(source: height, target: targetHeight)
        let w = width
        // Horizontal pass into premultiplied floats: targetWidth x height x 4.
        var rows = [Float](repeating: 0, count: targetWidth * height * 4)
        withUnsafeBytes { raw in
            let src = raw.bindMemory(to: UInt8.self)
            rows.withUnsafeMutableBufferPointer { out in
                for y in 0..<height {
                    let srcRow = y * w * 4
                    let outRow = y * targetWidth * 4
                    for tx in 0..<targetWidth {
                        var r: Float = 0, g: Float = 0, b: Float = 0, a: Float = 0
                        let span = horizontal.spans[tx]
                        for k in 0..<span.count {
                            let p = srcRow + (span.start + k) * 4
                            let weight = horizontal.weights[span.offset + k]
                            let alpha = Float(src[p + 3]) * weight
                            r += Float(src[p]) * alpha
                            g += Float(src[p + 1]) * alpha
                            b += Float(src[p + 2]) * alpha
                            a += alpha
                        }
                        out[outRow + tx * 4] = r
                        out[outRow + tx * 4 + 1] = g
                        out[outRow + tx * 4 + 2] = b
                        out[outRow + tx * 4 + 3] = a
                    }
                }
            }
        }
        let storage = PixelStorage(uninitializedCount: targetWidth * targetHeight * 4)
        rows.withUnsafeBufferPointer { src in
            let dst = storage.pointer
            for ty in 0..<targetHeight {
                let span = vertical.spans[ty]
                let outRow = ty * targetWidth * 4
                for tx in 0..<targetWidth {
                    var r: Float = 0, g: Float = 0, b: Float = 0, a: Float = 0
                    for k in 0..<span.count {
                        let p = ((span.start + k) * targetWidth + tx) * 4
                        let weight = vertical.weights[span.offset + k]
                        r += src[p] * weight
                        g += src[p + 1] * weight
                        b += src[p + 2] * weight
                        a += src[p + 3] * weight
                    }
                    let o = outRow + tx * 4
                    if a <= 0.0001 {
                        dst[o] = 0; dst[o + 1] = 0; dst[o + 2] = 0; dst[o + 3] = 0
                    } else {
                        dst[o] = UInt8(min(255, (r / a).rounded()))
                        dst[o + 1] = UInt8(min(255, (g / a).rounded()))
                        dst[o + 2] = UInt8(min(255, (b / a).rounded()))
                        dst[o + 3] = UInt8(min(255, a.rounded()))
                    }
                }
            }
        }
        return Bitmap(width: targetWidth, height: targetHeight, storage: storage)
    }
}

/// For each target index, which source indices it covers and with what weight (summing to 1).
private struct AreaWeights {
    struct Span { var start: Int; var count: Int; var offset: Int }
    var spans: [Span] = []
    var weights: [Float] = []

    init(source: Int, target: Int) {
        let ratio = Double(source) / Double(target)
        spans.reserveCapacity(target)
        for t in 0..<target {
            let lo = Double(t) * ratio, hi = Double(t + 1) * ratio
            let first = Int(lo), last = min(source - 1, Int((hi - 1e-9).rounded(.up)) - 1)
            let offset = weights.count
            for s in first...max(first, last) {
                let cover = min(hi, Double(s + 1)) - max(lo, Double(s))
                weights.append(Float(max(0, cover) / ratio))
            }
            spans.append(Span(start: first, count: max(first, last) - first + 1, offset: offset))
        }
    }
}

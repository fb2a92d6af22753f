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
        let w = width, h = height
        // Horizontal pass into premultiplied floats: targetWidth x height x 4.
        let rows = UnsafeMutableBufferPointer<Float>.allocate(capacity: targetWidth * h * 4)
        defer { rows.deallocate() }
        withUnsafeBytes { raw in
            let src = raw.bindMemory(to: UInt8.self).baseAddress!
            horizontal.spans.withUnsafeBufferPointer { spans in
                horizontal.weights.withUnsafeBufferPointer { weights in
                    for y in 0..<h {
                        let srcRow = src + y * w * 4
                        var out = rows.baseAddress! + y * targetWidth * 4
                        for span in spans {
                            var r: Float = 0, g: Float = 0, b: Float = 0, a: Float = 0
                            var p = srcRow + span.start * 4
                            for k in 0..<span.count {
                                let alpha = Float(p[3]) * weights[span.offset + k]
                                r += Float(p[0]) * alpha
                                g += Float(p[1]) * alpha
                                b += Float(p[2]) * alpha
                                a += alpha
                                p += 4
                            }
                            out[0] = r; out[1] = g; out[2] = b; out[3] = a
                            out += 4
                        }
                    }
                }
            }
        }
        // Vertical pass, back to straight alpha.
        let storage = PixelStorage(uninitializedCount: targetWidth * targetHeight * 4)
        let accumulator = UnsafeMutableBufferPointer<Float>.allocate(capacity: targetWidth * 4)
        defer { accumulator.deallocate() }
        vertical.spans.withUnsafeBufferPointer { spans in
            vertical.weights.withUnsafeBufferPointer { weights in
                let rowFloats = targetWidth * 4
                for ty in 0..<targetHeight {
                    let span = spans[ty]
                    accumulator.update(repeating: 0)
                    for k in 0..<span.count {
                        let weight = weights[span.offset + k]
                        let source = rows.baseAddress! + (span.start + k) * rowFloats
                        for i in 0..<rowFloats { accumulator[i] += source[i] * weight }
                    }
                    let dst = storage.pointer + ty * rowFloats
                    var i = 0
                    while i < rowFloats {
                        let a = accumulator[i + 3]
                        if a <= 0.0001 {
                            dst[i] = 0; dst[i + 1] = 0; dst[i + 2] = 0; dst[i + 3] = 0
                        } else {
                            let inverse = 1 / a
                            dst[i] = UInt8(min(255, (accumulator[i] * inverse).rounded()))
                            dst[i + 1] = UInt8(min(255, (accumulator[i + 1] * inverse).rounded()))
                            dst[i + 2] = UInt8(min(255, (accumulator[i + 2] * inverse).rounded()))
                            dst[i + 3] = UInt8(min(255, a.rounded()))
                        }
                        i += 4
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

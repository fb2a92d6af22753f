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
        let rowBytes = width * 4, rowFloats = targetWidth * 4
        // An opaque bitmap (every JPEG) needs no premultiplying and no division back.
        let opaque = isFullyOpaque
        // Source rows reduced horizontally one at a time, as the vertical pass needs them; a row
        // shared by two output rows is kept (the newest one always is), so each is reduced once
        // and the working set is three rows of floats, not a whole intermediate image.
        let buffers = UnsafeMutableBufferPointer<Float>.allocate(capacity: rowFloats * 3)
        defer { buffers.deallocate() }
        var reduced = buffers.baseAddress!, scratch = reduced + rowFloats
        let accumulator = scratch + rowFloats
        var reducedRow = -1
        let storage = PixelStorage(uninitializedCount: targetWidth * targetHeight * 4)
        withUnsafeBytes { raw in
            let src = raw.bindMemory(to: UInt8.self).baseAddress!
            horizontal.spans.withUnsafeBufferPointer { hSpans in
            horizontal.weights.withUnsafeBufferPointer { hWeights in
            vertical.spans.withUnsafeBufferPointer { vSpans in
            vertical.weights.withUnsafeBufferPointer { vWeights in
                /// Row `y` reduced to `targetWidth` pixels of (premultiplied, unless opaque) floats.
                func reduce(_ y: Int, into out: UnsafeMutablePointer<Float>) {
                    let srcRow = src + y * rowBytes
                    var out = UnsafeMutableRawPointer(out)
                    for span in hSpans {
                        var sum = SIMD4<Float>()
                        var p = srcRow + span.start * 4
                        if opaque {
                            for k in 0..<span.count {
                                sum += SIMD4<Float>(UnsafeRawPointer(p).loadUnaligned(as: SIMD4<UInt8>.self)) * hWeights[span.offset + k]
                                p += 4
                            }
                        } else {
                            // r, g, b times alpha times the weight, and alpha times the weight.
                            for k in 0..<span.count {
                                var pixel = SIMD4<Float>(UnsafeRawPointer(p).loadUnaligned(as: SIMD4<UInt8>.self))
                                let alpha = pixel[3] * hWeights[span.offset + k]
                                pixel *= alpha
                                pixel[3] = alpha
                                sum += pixel
                                p += 4
                            }
                        }
                        out.storeBytes(of: sum, as: SIMD4<Float>.self)
                        out += 16
                    }
                }
                for ty in 0..<targetHeight {
                    let span = vSpans[ty]
                    accumulator.update(repeating: 0, count: rowFloats)
                    for k in 0..<span.count {
                        let y = span.start + k
                        if y != reducedRow {
                            reduce(y, into: scratch)
                            swap(&reduced, &scratch)
                            reducedRow = y
                        }
                        let weight = vWeights[span.offset + k]
                        for i in 0..<rowFloats { accumulator[i] += reduced[i] * weight }
                    }
                    // Back to bytes (and straight alpha); non-negative, so adding a half and
                    // truncating rounds as `rounded()` does, without a call.
                    let dst = storage.pointer + ty * rowFloats
                    var i = 0
                    if opaque {
                        while i < rowFloats {
                            dst[i] = UInt8(min(255, accumulator[i] + 0.5))
                            dst[i + 1] = UInt8(min(255, accumulator[i + 1] + 0.5))
                            dst[i + 2] = UInt8(min(255, accumulator[i + 2] + 0.5))
                            dst[i + 3] = 255
                            i += 4
                        }
                        continue
                    }
                    while i < rowFloats {
                        let a = accumulator[i + 3]
                        if a <= 0.0001 {
                            dst[i] = 0; dst[i + 1] = 0; dst[i + 2] = 0; dst[i + 3] = 0
                        } else {
                            let inverse = 1 / a
                            dst[i] = UInt8(min(255, accumulator[i] * inverse + 0.5))
                            dst[i + 1] = UInt8(min(255, accumulator[i + 1] * inverse + 0.5))
                            dst[i + 2] = UInt8(min(255, accumulator[i + 2] * inverse + 0.5))
                            dst[i + 3] = UInt8(min(255, a + 0.5))
                        }
                        i += 4
                    }
                }
            }
            }
            }
            }
        }
        return Bitmap(width: targetWidth, height: targetHeight, storage: storage)
    }
}

extension Bitmap {
    /// Whether every pixel's alpha is 255.
    var isFullyOpaque: Bool {
        withUnsafeBytes { raw in
            let pixels = raw.bindMemory(to: UInt32.self)
            // Little-endian RGBA: alpha is the high byte. Chunks keep the check vectorizable and stop early.
            var start = 0
            while start < pixels.count {
                let end = min(pixels.count, start + 4096)
                var all: UInt32 = 0xFF00_0000
                for index in start..<end { all &= pixels[index] }
                if all & 0xFF00_0000 != 0xFF00_0000 { return false }
                start = end
            }
            return true
        }
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

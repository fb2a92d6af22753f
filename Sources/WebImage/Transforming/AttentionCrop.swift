/// Where a crop keeps the most salient part of an image, as libvips's `attention` strategy
/// judges it: edges (the luma's Laplacian), skin tones and saturated colours, summed on a copy
/// at most 256 pixels a side; the crop window with the highest sum wins (the centre among equals).
package enum AttentionCrop {
    /// The largest side of the map the window is searched on.
    static let mapSide = 256

    /// The top-left corner, in `bitmap`'s pixels, of the `width` x `height` crop (each no
    /// larger than the image) that keeps the most of what draws the eye.
    package static func origin(of width: Int, _ height: Int, in bitmap: Bitmap) throws -> (x: Int, y: Int) {
        let (w, h) = (bitmap.width, bitmap.height)
        guard width < w || height < h else { return (0, 0) }
        let scale = min(1, Double(mapSide) / Double(max(w, h)))
        let map = scale < 1
            ? try ResizingTransformer(width: max(1, (Double(w) * scale).rounded()), height: max(1, (Double(h) * scale).rounded())).transform(bitmap)
            : bitmap
        let (mw, mh) = (map.width, map.height)
        let scores = interest(map)
        // A summed-area table, then every window position along the free axes.
        var table = [Float](repeating: 0, count: (mw + 1) * (mh + 1))
        for y in 0..<mh {
            var row: Float = 0
            for x in 0..<mw {
                row += scores[y * mw + x]
                table[(y + 1) * (mw + 1) + x + 1] = table[y * (mw + 1) + x + 1] + row
            }
        }
        let cw = min(mw, max(1, Int((Double(width) * Double(mw) / Double(w)).rounded())))
        let ch = min(mh, max(1, Int((Double(height) * Double(mh) / Double(h)).rounded())))
        func sum(_ x: Int, _ y: Int) -> Float {
            table[(y + ch) * (mw + 1) + x + cw] - table[y * (mw + 1) + x + cw] - table[(y + ch) * (mw + 1) + x] + table[y * (mw + 1) + x]
        }
        let (centreX, centreY) = (Double(mw - cw) / 2, Double(mh - ch) / 2)
        var best = (x: 0, y: 0, score: -Float.infinity, distance: Double.infinity)
        for y in 0...(mh - ch) {
            for x in 0...(mw - cw) {
                let score = sum(x, y)
                let distance = abs(Double(x) - centreX) + abs(Double(y) - centreY)
                if score > best.score * 1.0001 || (score >= best.score && distance < best.distance) {
                    best = (x, y, score, distance)
                }
            }
        }
        let x = Int((Double(best.x) * Double(w) / Double(mw)).rounded()), y = Int((Double(best.y) * Double(h) / Double(mh)).rounded())
        return (min(max(0, x), w - width), min(max(0, y), h - height))
    }

    /// Each pixel's interest: the luma's Laplacian, plus skin tones and saturated colours.
    static func interest(_ bitmap: Bitmap) -> [Float] {
        let (w, h) = (bitmap.width, bitmap.height)
        return bitmap.withUnsafeBytes { raw in
            let pixels = raw.bindMemory(to: SIMD4<UInt8>.self)
            var luma = [Float](repeating: 0, count: w * h)
            var colour = [Float](repeating: 0, count: w * h)
            for i in 0..<(w * h) {
                let p = pixels[i]
                let (r, g, b, a) = (Float(p.x), Float(p.y), Float(p.z), Float(p.w) / 255)
                luma[i] = (0.299 * r + 0.587 * g + 0.114 * b) * a
                let high = max(r, g, b), low = min(r, g, b)
                let saturation = high > 0 ? (high - low) / high : 0
                // Skin (Kovac's rule in RGB) and strong colour, each worth a strong edge.
                let skin: Float = r > 95 && g > 40 && b > 20 && r > g && r > b && r - g > 15 && high - low > 15 ? 1 : 0
                colour[i] = a * (skin * 96 + (saturation > 0.4 ? saturation * 64 : 0))
            }
            var scores = colour
            for y in 0..<h {
                for x in 0..<w {
                    let c = luma[y * w + x]
                    let l = luma[y * w + max(0, x - 1)], r = luma[y * w + min(w - 1, x + 1)]
                    let u = luma[max(0, y - 1) * w + x], d = luma[min(h - 1, y + 1) * w + x]
                    scores[y * w + x] += abs(4 * c - l - r - u - d)
                }
            }
            return scores
        }
    }
}

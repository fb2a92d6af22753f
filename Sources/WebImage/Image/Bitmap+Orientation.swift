extension Bitmap {
    /// The bitmap turned upright for an EXIF orientation (exact pixel moves, no resampling).
    public func oriented(_ orientation: ExifOrientation) -> Bitmap {
        if orientation == .up { return self }
        let w = width, h = height
        let (ow, oh) = orientation.swapsDimensions ? (h, w) : (w, h)
        let out = PixelStorage(uninitializedCount: ow * oh * 4)
        withUnsafeBytes { raw in
            let src = raw.bindMemory(to: UInt32.self)
            let dst = UnsafeMutableRawPointer(out.pointer).bindMemory(to: UInt32.self, capacity: ow * oh)
            for oy in 0..<oh {
                let row = dst + oy * ow
                switch orientation {
                case .up: for ox in 0..<ow { row[ox] = src[oy * w + ox] }
                case .upMirrored: for ox in 0..<ow { row[ox] = src[oy * w + (w - 1 - ox)] }
                case .down: for ox in 0..<ow { row[ox] = src[(h - 1 - oy) * w + (w - 1 - ox)] }
                case .downMirrored: for ox in 0..<ow { row[ox] = src[(h - 1 - oy) * w + ox] }
                case .leftMirrored: for ox in 0..<ow { row[ox] = src[ox * w + oy] }
                case .right: for ox in 0..<ow { row[ox] = src[(h - 1 - ox) * w + oy] }
                case .rightMirrored: for ox in 0..<ow { row[ox] = src[(h - 1 - ox) * w + (w - 1 - oy)] }
                case .left: for ox in 0..<ow { row[ox] = src[ox * w + (w - 1 - oy)] }
                }
            }
        }
        return Bitmap(width: ow, height: oh, storage: out, isPremultiplied: isPremultiplied)
    }
}

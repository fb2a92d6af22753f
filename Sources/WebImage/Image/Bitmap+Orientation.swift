extension Bitmap {
    /// The bitmap turned upright for an EXIF orientation (exact pixel moves, no resampling).
    public func oriented(_ orientation: ExifOrientation) -> Bitmap {
        if orientation == .up { return self }
        let (ow, oh) = orientation.swapsDimensions ? (height, width) : (width, height)
        let out = PixelStorage(uninitializedCount: ow * oh * pixelFormat.bytesPerPixel)
        if pixelFormat == .rgba16 {
            move(UInt64.self, orientation, into: out, width: ow, height: oh)
        } else {
            move(UInt32.self, orientation, into: out, width: ow, height: oh)
        }
        return Bitmap(width: ow, height: oh, storage: out, isPremultiplied: isPremultiplied, pixelFormat: pixelFormat)
    }

    /// The pixel moves of `oriented(_:)`, a pixel being one `Pixel` (four channels of 8 or 16 bits).
    private func move<Pixel>(_: Pixel.Type, _ orientation: ExifOrientation, into out: PixelStorage, width ow: Int, height oh: Int) {
        let w = width, h = height
        withUnsafeBytes { raw in
            let src = raw.bindMemory(to: Pixel.self)
            let dst = UnsafeMutableRawPointer(out.pointer).bindMemory(to: Pixel.self, capacity: ow * oh)
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
    }
}

import CWebImageCodecs

extension Bitmap {
    /// The bitmap reduced to `targetWidth` x `targetHeight` by area averaging (each output pixel
    /// is the coverage-weighted mean of the source pixels under it), in premultiplied alpha so
    /// transparent edges get no dark fringe. An opaque bitmap is summed in 16-bit fixed point (to
    /// 1/256 of a level), so a value lying within a few hundredths of a half may round the other
    /// way. Decode-at-size uses it after DCT or codec scaling.
    /// A target larger than the bitmap in either direction returns the bitmap unchanged
    /// (enlarging is a transformer's job). Synchronous CPU work.
    public func areaDownscaled(toWidth targetWidth: Int, height targetHeight: Int) -> Bitmap {
        guard targetWidth > 0, targetHeight > 0, targetWidth <= width, targetHeight <= height,
              targetWidth != width || targetHeight != height else { return self }
        // The averaging is 8-bit: a deep bitmap is rounded to 8 bits first (DocC "Formats").
        guard pixelFormat == .rgba8 else { return converted(to: .rgba8).areaDownscaled(toWidth: targetWidth, height: targetHeight) }
        // An opaque bitmap (every JPEG) needs no premultiplying and no division back.
        let opaque: Int32 = isFullyOpaque ? 1 : 0
        let storage = PixelStorage(uninitializedCount: targetWidth * targetHeight * 4)
        // The loops are C (wi_area.c): Clang's vector conversions, where Swift's SIMD ones from
        // Float to integers are not specialized.
        let status = withUnsafeBytes { raw in
            wi_area_downscale(raw.bindMemory(to: UInt8.self).baseAddress, UInt32(width), UInt32(height), opaque,
                              storage.pointer, UInt32(targetWidth), UInt32(targetHeight))
        }
        // Only out of memory for its three rows of floats and its weights (the sizes were checked
        // above), where an allocation of this module would trap all the same.
        precondition(status == WI_OK, "area averaging failed: \(status)")
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

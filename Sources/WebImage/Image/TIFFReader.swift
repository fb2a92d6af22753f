/// The byte-order-aware reads of a TIFF-structured block (EXIF): its header, and the entries of
/// its first IFD. Every read is bounds-checked (nil past the end).
struct TIFFReader {
    let bytes: [UInt8]
    let littleEndian: Bool

    /// `tiff` (an `Exif\0\0` prefix skipped), or nil without a TIFF header (`II` or `MM`, 42).
    init?(_ tiff: some Collection<UInt8>) {
        var bytes = Array(tiff)
        if bytes.starts(with: Array("Exif\0\0".utf8)) { bytes.removeFirst(6) }
        guard bytes.count >= 8 else { return nil }
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        self.bytes = bytes
        guard u16(2) == 42 else { return nil }
    }

    func u16(_ o: Int) -> Int? {
        guard o >= 0, o + 2 <= bytes.count else { return nil }
        return littleEndian ? Int(bytes[o]) | Int(bytes[o + 1]) << 8 : Int(bytes[o]) << 8 | Int(bytes[o + 1])
    }

    func u32(_ o: Int) -> Int? {
        guard let a = u16(o), let b = u16(o + 2) else { return nil }
        return littleEndian ? a | b << 16 : a << 16 | b
    }

    /// The offsets of IFD0's 12-byte entries (nil when the IFD lies outside the block).
    var firstDirectoryEntries: [Int]? {
        guard let ifd = u32(4), let count = u16(ifd) else { return nil }
        return (0..<count).map { ifd + 2 + $0 * 12 }
    }
}

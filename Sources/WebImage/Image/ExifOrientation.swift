import Foundation

/// The EXIF orientation tag (0x0112): how stored pixels must be turned to display upright.
public enum ExifOrientation: Int, Sendable, CaseIterable {
    case up = 1, upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// Whether displaying upright swaps width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }
}

/// Reads the orientation tag out of EXIF (TIFF-structured) metadata.
enum ExifReader {
    /// The raw value of tag 0x0112 in IFD0 of `tiff` (a TIFF header and its IFDs), or nil.
    static func orientation(tiff: some Collection<UInt8>) -> Int? {
        var bytes = Array(tiff)
        if bytes.starts(with: Array("Exif\0\0".utf8)) { bytes.removeFirst(6) }
        guard bytes.count >= 8 else { return nil }
        let little: Bool
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= bytes.count else { return nil }
            return little ? Int(bytes[o]) | Int(bytes[o + 1]) << 8 : Int(bytes[o]) << 8 | Int(bytes[o + 1])
        }
        func u32(_ o: Int) -> Int? {
            guard let a = u16(o), let b = u16(o + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for entry in 0..<count {
            let o = ifd + 2 + entry * 12
            guard let tag = u16(o) else { return nil }
            if tag == 0x0112 {
                guard let type = u16(o + 2) else { return nil }
                switch type {
                case 3: return u16(o + 8)          // SHORT
                case 4: return u32(o + 8)          // LONG
                case 1, 7: return o + 8 < bytes.count ? Int(bytes[o + 8]) : nil
                default: return nil
                }
            }
        }
        return nil
    }
}

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
        guard let reader = TIFFReader(tiff), let entries = reader.firstDirectoryEntries else { return nil }
        for o in entries {
            guard let tag = reader.u16(o) else { return nil }
            if tag == 0x0112 {
                guard let type = reader.u16(o + 2) else { return nil }
                switch type {
                case 3: return reader.u16(o + 8)          // SHORT
                case 4: return reader.u32(o + 8)          // LONG
                case 1, 7: return o + 8 < reader.bytes.count ? Int(reader.bytes[o + 8]) : nil
                default: return nil
                }
            }
        }
        return nil
    }
}

import Foundation

/// The copyright notice of an EXIF block (IFD0's Copyright, 0x8298, and Artist, 0x013B), read
/// so that a file stripped of its metadata can keep who owns it (imgproxy's `keep_copyright`),
/// and written back as an EXIF block of those two tags alone.
struct ExifCopyright: Equatable {
    var copyright: [UInt8]?
    var artist: [UInt8]?

    /// The tags of `tiff` (a TIFF header and its IFDs; an `Exif\0\0` prefix is skipped), or nil
    /// when it has neither. Only ASCII values are read, each at most 64 KB.
    init?(tiff: some Collection<UInt8>) {
        guard let reader = TIFFReader(tiff), let entries = reader.firstDirectoryEntries else { return nil }
        func ascii(_ entry: Int) -> [UInt8]? {
            guard reader.u16(entry + 2) == 2, let count = reader.u32(entry + 4), count > 0, count <= 1 << 16 else { return nil }
            let start = count <= 4 ? entry + 8 : (reader.u32(entry + 8) ?? -1)
            guard start >= 0, start + count <= reader.bytes.count else { return nil }
            var value = Array(reader.bytes[start..<(start + count)])
            while value.last == 0 { value.removeLast() }
            return value.isEmpty ? nil : value
        }
        for entry in entries {
            switch reader.u16(entry) {
            case 0x8298?: copyright = ascii(entry)
            case 0x013B?: artist = ascii(entry)
            case nil: break
            default: continue
            }
        }
        guard copyright != nil || artist != nil else { return nil }
    }

    /// A little-endian TIFF block (no `Exif\0\0` prefix) with IFD0 holding these tags alone.
    var tiff: [UInt8] {
        // Tags in ascending order, as TIFF requires: Artist, then Copyright.
        let values = [(0x013B, artist), (0x8298, copyright)].compactMap { tag, value in value.map { (tag, $0 + [0]) } }
        var out: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        func u16(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        u16(values.count)
        var dataOffset = 8 + 2 + values.count * 12 + 4
        var data: [UInt8] = []
        for (tag, value) in values {
            u16(tag); u16(2); u32(value.count)
            if value.count <= 4 {
                out += value + [UInt8](repeating: 0, count: 4 - value.count)
            } else {
                u32(dataOffset)
                data += value
                if value.count % 2 == 1 { data.append(0) }   // values start on a word boundary
                dataOffset += value.count + value.count % 2
            }
        }
        u32(0)   // no IFD1
        return out + data
    }
}

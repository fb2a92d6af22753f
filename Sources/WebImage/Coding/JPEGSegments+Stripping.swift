import Foundation

extension JPEGSegments {
    /// `data` with only the segments that show its image: every APPn but JFIF (APP0), the ICC
    /// profile (APP2) and Adobe's colour transform (APP14) is dropped, and so are comments and
    /// the bytes after EOI (a phone's appended video or depth map); the scans are copied as they
    /// are. `exif` (a TIFF block) is written as an APP1 Exif segment after SOI (and JFIF), and
    /// `xmp` as an APP1 XMP segment after it; one that does not fit a segment is not written
    /// (`segmentCapacity`). Nil when the file does not start with SOI or a segment runs past
    /// its end.
    static func stripped(_ data: Data, exif: [UInt8]?, xmp: [UInt8]? = nil) -> Data? {
        data.withUnsafeBytes { raw -> Data? in
            let b = raw.bindMemory(to: UInt8.self)
            guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
            var out = Data(capacity: b.count)
            out.append(contentsOf: [0xFF, 0xD8])
            // The segments written after SOI (and JFIF): EXIF, then XMP.
            var inserted: [UInt8] = []
            for (name, block) in [("Exif\0\0", exif), ("http://ns.adobe.com/xap/1.0/\0", xmp)] {
                guard let block, block.count <= Self.segmentCapacity(name: name) else { continue }
                let length = block.count + name.utf8.count + 2
                inserted += [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + Array(name.utf8) + block
            }
            let exifSegment: [UInt8]? = inserted.isEmpty ? nil : inserted
            var o = 2
            var first = true
            while o < b.count {
                guard b[o] == 0xFF else { return nil }
                guard o + 1 < b.count else { break }
                let marker = b[o + 1]
                if marker == 0xFF { o += 1; continue }   // fill byte
                if marker == 0xD9 { out.append(contentsOf: [0xFF, 0xD9]); break }
                if (0xD0...0xD7).contains(marker) || marker == 0x01 { out.append(contentsOf: [0xFF, marker]); o += 2; continue }
                guard o + 4 <= b.count else { return nil }
                let length = Int(b[o + 2]) << 8 | Int(b[o + 3])
                guard length >= 2, o + 2 + length <= b.count else { return nil }
                let segment = UnsafeBufferPointer(rebasing: b[o..<(o + 2 + length)])
                let isJFIF = marker == 0xE0 && Self.payload(segment, startsWith: "JFIF\0")
                if first, !isJFIF, let exifSegment { out.append(contentsOf: exifSegment) }
                if Self.keeps(marker, segment) { out.append(contentsOf: segment) }
                if first, isJFIF, let exifSegment { out.append(contentsOf: exifSegment) }
                first = false
                o += 2 + length
                if marker == 0xDA {
                    // The entropy-coded data runs to the next marker that is not a stuffed 0xFF00,
                    // a restart marker or a fill byte.
                    var p = o
                    var marker: Int?
                    while p < b.count, let hit = Self.nextFF(b, from: p), hit + 1 < b.count {
                        let next = b[hit + 1]
                        if next == 0x00 || (0xD0...0xD7).contains(next) || next == 0xFF { p = hit + (next == 0xFF ? 1 : 2); continue }
                        marker = hit
                        break
                    }
                    // No marker after the scan: the file ends in its data, copied to the last byte.
                    p = marker ?? b.count
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: b[o..<p]))
                    o = p
                }
            }
            if first, let exifSegment { out.insert(contentsOf: exifSegment, at: 2) }
            return out
        }
    }

    /// The most bytes an APP segment opened by `name` holds.
    static func segmentCapacity(name: String) -> Int { 0xFFFF - 2 - name.utf8.count }

    /// Whether a segment stays: everything but APPn and COM, and of those JFIF, the ICC profile
    /// and Adobe's colour transform.
    private static func keeps(_ marker: UInt8, _ segment: UnsafeBufferPointer<UInt8>) -> Bool {
        switch marker {
        case 0xE0: payload(segment, startsWith: "JFIF\0") || payload(segment, startsWith: "JFXX\0")
        case 0xE2: payload(segment, startsWith: "ICC_PROFILE\0")
        case 0xEE: payload(segment, startsWith: "Adobe")
        case 0xE1...0xEF, 0xFE: false
        default: true
        }
    }

    private static func payload(_ segment: UnsafeBufferPointer<UInt8>, startsWith name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard segment.count >= 4 + count else { return false }
        return UnsafeBufferPointer(start: name.utf8Start, count: count).elementsEqual(segment[4..<(4 + count)])
    }

    /// The index of the next 0xFF at or after `start`.
    private static func nextFF(_ b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < b.count, let base = b.baseAddress,
              let hit = memchr(base + start, 0xFF, b.count - start) else { return nil }
        return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
    }
}

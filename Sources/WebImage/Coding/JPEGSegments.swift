import Foundation

/// The marker segments of a JPEG header, read without libjpeg (to find EXIF and the frame size).
enum JPEGSegments {
    /// The names that open the APP segments read here, made once (building one from a string
    /// literal on every read cost more than the walk itself).
    private static let exifName = Data("Exif\0\0".utf8)
    private static let iccName = Data("ICC_PROFILE\0".utf8)
    private static let xmpName = Data("http://ns.adobe.com/xap/1.0/\0".utf8)

    /// Calls `body` with each marker and its payload range, up to the first scan; stops when
    /// `body` returns false or the data ends.
    static func walk(_ data: Data, _ body: (UInt8, Range<Int>) -> Bool) {
        data.withUnsafeBytes { raw in
            let b = raw.bindMemory(to: UInt8.self)
            var o = 2
            while o + 4 <= b.count {
                guard b[o] == 0xFF else { return }
                let marker = b[o + 1]
                if marker == 0xFF { o += 1; continue }
                if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { o += 2; continue }
                if marker == 0xDA || marker == 0xD9 { return }
                let length = Int(b[o + 2]) << 8 | Int(b[o + 3])
                guard length >= 2, o + 2 + length <= b.count else { return }
                if !body(marker, (o + 4)..<(o + 2 + length)) { return }
                o += 2 + length
            }
        }
    }

    /// The TIFF-structured EXIF block of the APP1 "Exif" segment, if any.
    static func exifBlock(_ data: Data) -> Data? {
        var block: Data?
        walk(data) { marker, payload in
            let start = data.startIndex + payload.lowerBound
            if marker == 0xE1, payload.count >= 6, data[start..<(start + 6)] == exifName {
                block = data[(start + 6)..<(data.startIndex + payload.upperBound)]
                return false
            }
            return true
        }
        return block
    }

    /// The ICC profile of the APP2 `ICC_PROFILE` segments (a profile over 64 KB is split across
    /// several, numbered), or nil when there is none or a piece is missing.
    static func iccProfile(_ data: Data) -> Data? {
        let tag = iccName
        var pieces: [Int: Data] = [:]
        var expected = 0, total = 0
        walk(data) { marker, payload in
            let start = data.startIndex + payload.lowerBound
            guard marker == 0xE2, payload.count > 14, data[start..<(start + 12)] == tag else { return true }
            let sequence = Int(data[start + 12]), count = Int(data[start + 13])
            guard sequence >= 1, count >= 1, sequence <= count, expected == 0 || expected == count else { return false }
            expected = count
            let piece = data[(start + 14)..<(data.startIndex + payload.upperBound)]
            total += piece.count
            guard total <= ICCProfile.maximumBytes else { return false }
            pieces[sequence] = Data(piece)
            return true
        }
        guard expected > 0, pieces.count == expected else { return nil }
        return (1...expected).reduce(into: Data()) { $0.append(pieces[$1]!) }
    }

    /// The XMP packet of the APP1 segment named `http://ns.adobe.com/xap/1.0/`, if any.
    static func xmpPacket(_ data: Data) -> Data? {
        let signature = xmpName
        var packet: Data?
        walk(data) { marker, payload in
            let start = data.startIndex + payload.lowerBound
            if marker == 0xE1, payload.count >= signature.count, data[start..<(start + signature.count)] == signature {
                packet = data[(start + signature.count)..<(data.startIndex + payload.upperBound)]
                return false
            }
            return true
        }
        return packet
    }

    /// The orientation: EXIF's, else XMP's `tiff:Orientation`.
    static func orientation(_ data: Data) -> Int? {
        exifBlock(data).flatMap { ExifReader.orientation(tiff: $0) } ?? xmpPacket(data).flatMap { XMPReader.orientation($0) }
    }

    /// Width and height from the first SOF segment.
    static func frameSize(_ data: Data) -> (width: Int, height: Int)? {
        var size: (Int, Int)?
        walk(data) { marker, payload in
            let isSOF = (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker)
            guard isSOF, payload.count >= 5 else { return true }
            let s = data.startIndex + payload.lowerBound
            size = (Int(data[s + 3]) << 8 | Int(data[s + 4]), Int(data[s + 1]) << 8 | Int(data[s + 2]))
            return false
        }
        return size
    }
}

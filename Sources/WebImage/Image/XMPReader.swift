import Foundation

/// Reads the orientation of an XMP packet (`tiff:Orientation`, as Adobe and ImageIO write it),
/// used when a file has no EXIF orientation. XMP is XML, but the one property needed has two
/// spellings only, so the packet is scanned for them rather than parsed: as an attribute
/// (`tiff:Orientation="6"`) or as an element (`<tiff:Orientation>6</tiff:Orientation>`).
enum XMPReader {
    /// The most of a packet that is scanned: real packets are a few KB; a huge or lying one is
    /// read no further than this.
    static let scanLimit = 4 << 20

    /// The orientation 1...8 in `packet`, or nil (absent, malformed, out of range).
    static func orientation(_ packet: some Collection<UInt8>) -> Int? {
        let bytes = Array(packet.prefix(scanLimit))
        let name = Array("tiff:Orientation".utf8)
        var index = 0
        while let found = firstRange(of: name, in: bytes, from: index) {
            var cursor = found.upperBound
            func skipSpaces() { while cursor < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[cursor]) { cursor += 1 } }
            skipSpaces()
            guard cursor < bytes.count else { return nil }
            if bytes[cursor] == UInt8(ascii: "=") {
                // Attribute: ="6" or ='6'.
                cursor += 1
                skipSpaces()
                if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "\"") || bytes[cursor] == UInt8(ascii: "'") {
                    let quote = bytes[cursor]
                    if let value = digit(bytes, cursor + 1), cursor + 2 < bytes.count, bytes[cursor + 2] == quote { return value }
                }
            } else if bytes[cursor] == UInt8(ascii: ">") {
                // Element: >6</tiff:Orientation>.
                cursor += 1
                skipSpaces()
                if let value = digit(bytes, cursor) {
                    cursor += 1
                    skipSpaces()
                    if cursor + 1 < bytes.count, bytes[cursor] == UInt8(ascii: "<"), bytes[cursor + 1] == UInt8(ascii: "/") { return value }
                }
            }
            index = found.upperBound
        }
        return nil
    }

    /// A single digit 1...8 at `index`, not followed by another digit.
    private static func digit(_ bytes: [UInt8], _ index: Int) -> Int? {
        guard index < bytes.count, (UInt8(ascii: "1")...UInt8(ascii: "8")).contains(bytes[index]) else { return nil }
        if index + 1 < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index + 1]) { return nil }
        return Int(bytes[index] - UInt8(ascii: "0"))
    }

    private static func firstRange(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Range<Int>? {
        guard needle.count <= haystack.count, start <= haystack.count - needle.count else { return nil }
        var i = start
        while i <= haystack.count - needle.count {
            if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return i..<(i + needle.count) }
            i += 1
        }
        return nil
    }
}

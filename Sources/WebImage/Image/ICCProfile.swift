import Foundation

/// Reads what the library needs of an ICC profile: its description tag, and the profile stored
/// in each container (JPEG's chained APP2 segments, PNG's compressed iCCP chunk, WebP's ICCP chunk).
enum ICCProfile {
    /// The largest profile read (a CMYK press profile with its tables is a few hundred KB).
    static let maximumBytes = 4 << 20

    /// The profile's description (`desc` tag: ICC v2 `desc` text or v4 `mluc`, its first record),
    /// or nil when the bytes hold none.
    static func description(of profile: Data) -> String? {
        let bytes = [UInt8](profile)
        func u32(_ o: Int) -> Int? {
            guard o >= 0, o + 4 <= bytes.count else { return nil }
            return Int(bytes[o]) << 24 | Int(bytes[o + 1]) << 16 | Int(bytes[o + 2]) << 8 | Int(bytes[o + 3])
        }
        guard bytes.count >= 132, Array(bytes[36..<40]) == Array("acsp".utf8), let count = u32(128), count < 1024 else { return nil }
        for index in 0..<count {
            let entry = 132 + index * 12
            guard let signature = u32(entry), let offset = u32(entry + 4), let size = u32(entry + 8) else { return nil }
            guard signature == 0x6465_7363 /* desc */, offset + size <= bytes.count, size >= 12 else { continue }
            let tag = Array(bytes[offset..<(offset + size)])
            let type = String(decoding: tag[0..<4], as: UTF8.self)
            if type == "desc", let length = u32(offset + 8), length > 0, 12 + length <= size {
                let text = tag[12..<(12 + length)].prefix { $0 != 0 }
                return String(decoding: text, as: UTF8.self)
            }
            if type == "mluc", let records = u32(offset + 8), records > 0, let recordLength = u32(offset + 20),
               let textOffset = u32(offset + 24), textOffset + recordLength <= size, recordLength % 2 == 0 {
                let utf16 = stride(from: textOffset, to: textOffset + recordLength, by: 2).map { UInt16(tag[$0]) << 8 | UInt16(tag[$0 + 1]) }
                return String(decoding: utf16.prefix { $0 != 0 }, as: UTF16.self)
            }
            return nil
        }
        return nil
    }
}

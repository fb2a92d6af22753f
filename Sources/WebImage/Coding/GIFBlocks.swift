import Foundation

/// The block structure of a GIF file, followed without decoding its images (GIF89a's grammar:
/// header, logical screen, colour table, then extensions and images until the trailer).
enum GIFBlocks {
    /// The application extensions that show the image: the loop count (NETSCAPE2.0, ANIMEXTS1.0)
    /// and an ICC profile.
    private static let displayApplications: Set<String> = ["NETSCAPE2.0", "ANIMEXTS1.0", "ICCRGBG1012"]

    /// `data` without comment extensions, application extensions other than the loop count and
    /// the ICC profile (XMP travels in one), and anything after the trailer. Nil when a block
    /// runs past the end or an unknown block starts.
    static func stripped(_ data: Data) -> Data? {
        data.withUnsafeBytes { raw -> Data? in
            let b = raw.bindMemory(to: UInt8.self)
            guard b.count >= 13, b[0] == 0x47, b[1] == 0x49, b[2] == 0x46 else { return nil }
            var o = 13
            if b[10] & 0x80 != 0 { o += 3 << (Int(b[10] & 0x07) + 1) }
            guard o <= b.count else { return nil }
            var out = Data(capacity: b.count)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[0..<o]))
            /// The end of the sub-blocks starting at `start` (after their 0 terminator).
            func subBlocksEnd(_ start: Int) -> Int? {
                var p = start
                while p < b.count {
                    let size = Int(b[p])
                    p += 1 + size
                    if size == 0 { return p <= b.count ? p : nil }
                }
                return nil
            }
            while o < b.count {
                switch b[o] {
                case 0x3B:
                    out.append(0x3B)
                    return out
                case 0x21:
                    guard o + 2 < b.count, let end = subBlocksEnd(o + 2) else { return nil }
                    var keep = b[o + 1] != 0xFE
                    if b[o + 1] == 0xFF {
                        let id = o + 3
                        keep = b[o + 2] == 11 && id + 11 <= b.count
                            && displayApplications.contains(String(decoding: UnsafeBufferPointer(rebasing: b[id..<(id + 11)]), as: UTF8.self))
                    }
                    if keep { out.append(contentsOf: UnsafeBufferPointer(rebasing: b[o..<end])) }
                    o = end
                case 0x2C:
                    guard o + 10 <= b.count else { return nil }
                    var p = o + 10
                    if b[o + 9] & 0x80 != 0 { p += 3 << (Int(b[o + 9] & 0x07) + 1) }
                    guard p < b.count, let end = subBlocksEnd(p + 1) else { return nil }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: b[o..<end]))
                    o = end
                default:
                    return nil
                }
            }
            // No trailer: the file ended after a whole block; it gets one.
            out.append(0x3B)
            return out
        }
    }
}

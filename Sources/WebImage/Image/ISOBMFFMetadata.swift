import Foundation

/// The metadata an ISOBMFF file carries beside its image, read from its boxes without a decoder:
/// in HEIF and AVIF, the `Exif` item, the XMP item (a `mime` item of type
/// `application/rdf+xml`) and the ICC profile of a `colr` property; in a JPEG XL container, the
/// `Exif` and `xml ` boxes (a Brotli-compressed `brob` box is not read).
///
/// A stranger's file: every box size is checked against its parent, every item extent against
/// the file, only extents in the file itself are followed (construction method 0), and a piece
/// of metadata over 4 MB is not read.
struct ISOBMFFMetadata {
    /// The EXIF block (TIFF-structured, its offset prefix removed).
    var exif: Data?
    /// The XMP packet.
    var xmp: Data?
    /// The ICC profile.
    var icc: Data?

    static let maximumBytes = 4 << 20

    private struct Box {
        let type: String
        /// The box's contents after its header, as offsets into the file.
        let body: Range<Int>
    }

    private let data: Data

    /// The metadata of an HEIF or AVIF file (`meta` at the top level).
    init(heif data: Data) {
        self.data = data
        guard let meta = children(in: 0..<data.count).first(where: { $0.type == "meta" }), meta.body.count >= 4 else { return }
        let boxes = children(in: (meta.body.lowerBound + 4)..<meta.body.upperBound)
        var types: [Int: String] = [:]
        if let iinf = boxes.first(where: { $0.type == "iinf" }) { types = itemTypes(iinf) }
        if let iloc = boxes.first(where: { $0.type == "iloc" }) {
            let locations = itemLocations(iloc)
            for (id, type) in types.sorted(by: { $0.key < $1.key }) {
                guard let bytes = locations[id] else { continue }
                if type == "Exif", exif == nil { exif = Self.exifBlock(bytes) }
                if type == "application/rdf+xml", xmp == nil { xmp = bytes }
            }
        }
        if let iprp = boxes.first(where: { $0.type == "iprp" }),
           let ipco = children(in: iprp.body).first(where: { $0.type == "ipco" }) {
            for colr in children(in: ipco.body) where colr.type == "colr" && colr.body.count > 4 {
                let kind = fourCC(colr.body.lowerBound)
                guard kind == "prof" || kind == "rICC", colr.body.count - 4 <= Self.maximumBytes else { continue }
                icc = slice((colr.body.lowerBound + 4)..<colr.body.upperBound)
                break
            }
        }
    }

    /// The metadata of a JPEG XL container (a bare codestream has none outside its image).
    init(jxl data: Data) {
        self.data = data
        for box in children(in: 0..<data.count) where box.body.count <= Self.maximumBytes {
            switch box.type {
            case "Exif" where exif == nil: exif = Self.exifBlock(slice(box.body))
            case "xml " where xmp == nil: xmp = slice(box.body)
            default: break
            }
        }
    }

    /// An `Exif` item or box: a 4-byte offset to the TIFF header, then the block.
    private static func exifBlock(_ bytes: Data) -> Data? {
        guard bytes.count > 4 else { return nil }
        let s = bytes.startIndex
        let offset = Int(bytes[s]) << 24 | Int(bytes[s + 1]) << 16 | Int(bytes[s + 2]) << 8 | Int(bytes[s + 3])
        guard offset >= 0, offset < bytes.count - 4 else { return nil }
        return Data(bytes[(s + 4 + offset)...])
    }

    // MARK: - Boxes

    private func byte(_ at: Int) -> Int { Int(data[data.startIndex + at]) }

    private func u16(_ at: Int) -> Int { byte(at) << 8 | byte(at + 1) }

    private func u32(_ at: Int) -> Int { u16(at) << 16 | u16(at + 2) }

    /// An unsigned big-endian number of `size` bytes (0, 4 or 8) at `at`.
    private func number(_ at: Int, size: Int) -> Int? {
        switch size {
        case 0: return 0
        case 4: return u32(at)
        case 8:
            let high = u32(at)
            guard high < 1 << 30 else { return nil }
            return high << 32 | u32(at + 4)
        default: return nil
        }
    }

    private func fourCC(_ at: Int) -> String {
        String(decoding: data[(data.startIndex + at)..<(data.startIndex + at + 4)], as: UTF8.self)
    }

    private func slice(_ range: Range<Int>) -> Data { Data(data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)]) }

    /// The boxes in `range`, up to the first whose size does not fit.
    private func children(in range: Range<Int>) -> [Box] {
        var boxes: [Box] = []
        var at = range.lowerBound
        while at + 8 <= range.upperBound {
            var size = u32(at), header = 8
            if size == 1 {
                guard at + 16 <= range.upperBound, let large = number(at + 8, size: 8) else { break }
                (size, header) = (large, 16)
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, size <= range.upperBound - at else { break }
            boxes.append(Box(type: fourCC(at + 4), body: (at + header)..<(at + size)))
            at += size
        }
        return boxes
    }

    /// The item types `iinf` declares, by item ID; a `mime` item by its content type.
    private func itemTypes(_ iinf: Box) -> [Int: String] {
        guard iinf.body.count >= 6 else { return [:] }
        let version = byte(iinf.body.lowerBound)
        let header = version == 0 ? 6 : 8   // version and flags, then a 16- or 32-bit entry count
        guard iinf.body.count >= header else { return [:] }
        let entries = (iinf.body.lowerBound + header)..<iinf.body.upperBound
        var types: [Int: String] = [:]
        for infe in children(in: entries) where infe.type == "infe" && infe.body.count >= 12 {
            let at = infe.body.lowerBound, version = byte(at)
            guard version >= 2 else { continue }
            let idSize = version == 2 ? 2 : 4
            guard infe.body.count >= 4 + idSize + 2 + 4 else { continue }
            let id = idSize == 2 ? u16(at + 4) : u32(at + 4)
            let typeAt = at + 4 + idSize + 2
            var type = fourCC(typeAt)
            if type == "mime" {
                // The item name (NUL-terminated), then the content type (NUL-terminated).
                let strings = slice((typeAt + 4)..<infe.body.upperBound).split(separator: 0, omittingEmptySubsequences: false)
                guard strings.count >= 2 else { continue }
                type = String(decoding: strings[1], as: UTF8.self)
            }
            types[id] = type
        }
        return types
    }

    /// The bytes of each item `iloc` places in the file itself (its extents joined).
    private func itemLocations(_ iloc: Box) -> [Int: Data] {
        let end = iloc.body.upperBound
        var at = iloc.body.lowerBound
        guard at + 8 <= end else { return [:] }
        let version = byte(at)
        // Version and flags, the field sizes, then a 16-bit (32-bit in version 2) item count.
        guard version <= 2, at + (version < 2 ? 8 : 10) <= end else { return [:] }
        let offsetSize = byte(at + 4) >> 4, lengthSize = byte(at + 4) & 15
        let baseOffsetSize = byte(at + 5) >> 4, indexSize = version >= 1 ? byte(at + 5) & 15 : 0
        at += 6
        let count: Int
        if version < 2 { count = u16(at); at += 2 } else { count = u32(at); at += 4 }
        var items: [Int: Data] = [:]
        for _ in 0..<min(count, 10_000) {
            let idSize = version < 2 ? 2 : 4
            guard at + idSize + (version >= 1 ? 2 : 0) + 2 + baseOffsetSize + 2 <= end else { break }
            let id = idSize == 2 ? u16(at) : u32(at)
            at += idSize
            var method = 0
            if version >= 1 { method = u16(at) & 15; at += 2 }
            at += 2   // data_reference_index
            guard let base = number(at, size: baseOffsetSize) else { break }
            at += baseOffsetSize
            let extents = u16(at)
            at += 2
            var bytes = Data(), usable = method == 0
            for _ in 0..<extents {
                guard at + indexSize + offsetSize + lengthSize <= end else { return items }
                at += indexSize
                guard let offset = number(at, size: offsetSize), let length = number(at + offsetSize, size: lengthSize) else { return items }
                at += offsetSize + lengthSize
                let start = base + offset
                let stop = length == 0 ? data.count : start + length
                guard usable, start >= 0, start <= stop, stop <= data.count, bytes.count + (stop - start) <= Self.maximumBytes else {
                    usable = false
                    continue
                }
                bytes += slice(start..<stop)
            }
            if usable, !bytes.isEmpty { items[id] = bytes }
        }
        return items
    }
}

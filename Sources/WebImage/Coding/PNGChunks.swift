import CWebImageCodecs
import Foundation

/// The chunk layout of a PNG file, read without decoding any pixels.
struct PNGChunks {
    struct Chunk {
        var type: String
        /// Where the chunk's data lies in the file.
        var data: Range<Int>
        /// Where the whole chunk (length, type, data, CRC) lies in the file.
        var whole: Range<Int>
        /// Whether the stored CRC is right (always true for IDAT, which libpng checks itself).
        var crcMatches: Bool
    }

    var chunks: [Chunk] = []
    /// Whether the data ends inside a chunk (cut mid-chunk rather than at a chunk boundary).
    var endsMidChunk = false

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Scans the chunks of `data` up to IEND or the first chunk that does not fit.
    init(_ data: Data) {
        data.withUnsafeBytes { raw in
            let b = raw.bindMemory(to: UInt8.self)
            guard b.count >= 8, Array(b[0..<8]) == PNGChunks.signature else { return }
            var o = 8
            while o < b.count {
                guard o + 12 <= b.count else { endsMidChunk = true; break }
                let length = Int(PNGChunks.u32(b, o))
                guard length <= b.count - o - 12 else { endsMidChunk = true; break }
                let type = String(decoding: b[(o + 4)..<(o + 8)], as: UTF8.self)
                // IDAT (the bulk of the file) is checked by libpng when it decodes; only the chunks
                // read here (acTL, fcTL, fdAT, eXIf, ...) need their CRC computed.
                let crcMatches = type == "IDAT"
                    || wi_crc32(0, b.baseAddress! + o + 4, 4 + length) == PNGChunks.u32(b, o + 8 + length)
                chunks.append(Chunk(type: type, data: (o + 8)..<(o + 8 + length), whole: o..<(o + 12 + length),
                                    crcMatches: crcMatches))
                o += 12 + length
                if type == "IEND" { break }
            }
        }
    }

    static func u32(_ b: UnsafeBufferPointer<UInt8>, _ o: Int) -> UInt32 {
        UInt32(b[o]) << 24 | UInt32(b[o + 1]) << 16 | UInt32(b[o + 2]) << 8 | UInt32(b[o + 3])
    }

    /// Width and height from IHDR, if it is the first chunk.
    func headerSize(in data: Data) -> (width: Int, height: Int)? {
        guard let ihdr = chunks.first, ihdr.type == "IHDR", ihdr.data.count == 13 else { return nil }
        return (Int(data.bigEndianUInt32(at: ihdr.data.lowerBound)), Int(data.bigEndianUInt32(at: ihdr.data.lowerBound + 4)))
    }

    /// The ICC profile of the iCCP chunk before the image data (keyword, compression method 0,
    /// a zlib stream), inflated, or nil when there is none or it does not inflate.
    func iccProfile(in data: Data) -> Data? {
        for chunk in chunks {
            if chunk.type == "IDAT" { return nil }
            guard chunk.type == "iCCP", chunk.crcMatches else { continue }
            let body = data[(data.startIndex + chunk.data.lowerBound)..<(data.startIndex + chunk.data.upperBound)]
            guard let end = body.prefix(80).firstIndex(of: 0), end + 1 < body.endIndex, body[end + 1] == 0 else { return nil }
            let stream = body[(end + 2)...]
            var out = wi_buffer()
            let status = stream.withBytePointer { wi_inflate($0, $1, ICCProfile.maximumBytes, &out) }
            guard status == WI_OK else { return nil }
            return CodecBridge.takeData(&out)
        }
        return nil
    }

    /// The colour description before the image data: the iCCP profile, and the cICP code points
    /// (PNG's third edition: they take precedence, so a file with both is converted from them).
    func colorInfo(in data: Data) -> ImageColorInfo {
        var cicp: ImageColorInfo.CICP?
        for chunk in chunks {
            if chunk.type == "IDAT" { break }
            guard chunk.type == "cICP", chunk.crcMatches, chunk.data.count == 4 else { continue }
            let b = data.startIndex + chunk.data.lowerBound
            cicp = ImageColorInfo.CICP(colorPrimaries: Int(data[b]), transferCharacteristics: Int(data[b + 1]),
                                       matrixCoefficients: Int(data[b + 2]), fullRange: data[b + 3] != 0)
        }
        return ImageColorInfo(iccProfile: cicp == nil ? iccProfile(in: data) : nil, cicp: cicp)
    }

    /// The EXIF orientation from an eXIf chunk before the image data, if any.
    func exifOrientation(in data: Data) -> Int? {
        for chunk in chunks {
            if chunk.type == "IDAT" { return nil }
            if chunk.type == "eXIf", chunk.crcMatches { return ExifReader.orientation(tiff: data[chunk.data]) }
        }
        return nil
    }

    /// The orientation: the eXIf chunk's, else the `tiff:Orientation` of an uncompressed
    /// `XML:com.adobe.xmp` iTXt chunk (anywhere in the file, as XMP writers put it).
    func orientation(in data: Data) -> Int? {
        if let exif = exifOrientation(in: data) { return exif }
        return xmpPacket(in: data).flatMap { XMPReader.orientation($0) }
    }

    /// The packet of the first uncompressed `XML:com.adobe.xmp` iTXt chunk, anywhere in the file.
    func xmpPacket(in data: Data) -> Data? {
        for chunk in chunks where chunk.type == "iTXt" && chunk.crcMatches {
            if let packet = PNGChunks.xmpText(data[chunk.data]) { return packet }
        }
        return nil
    }

    /// The EXIF block ImageMagick and GIMP write as text before PNG had `eXIf`: a tEXt, zTXt or
    /// iTXt chunk named `Raw profile type exif` (or `APP1`) whose text is a line with the name, a
    /// line with the byte count, then the bytes in hex (at most 1 MB).
    func legacyExifBlock(in data: Data) -> Data? {
        for chunk in chunks where ["tEXt", "zTXt", "iTXt"].contains(chunk.type) && chunk.crcMatches {
            let body = data[(data.startIndex + chunk.data.lowerBound)..<(data.startIndex + chunk.data.upperBound)]
            guard let nul = body.prefix(80).firstIndex(of: 0) else { continue }
            let keyword = String(decoding: body[body.startIndex..<nul], as: UTF8.self)
            guard keyword == "Raw profile type exif" || keyword == "Raw profile type APP1" else { continue }
            var text: Data
            switch chunk.type {
            case "tEXt": text = Data(body[(nul + 1)...])
            case "zTXt":
                guard nul + 2 <= body.endIndex, let inflated = Self.inflate(body[(nul + 2)...]) else { continue }
                text = inflated
            default:
                // iTXt: compression flag and method, language tag, translated keyword, text.
                guard nul + 3 <= body.endIndex else { continue }
                let compressed = body[nul + 1] == 1
                var cursor = nul + 3
                for _ in 0..<2 {
                    guard let end = body[cursor...].firstIndex(of: 0) else { cursor = body.endIndex; break }
                    cursor = end + 1
                }
                guard cursor < body.endIndex else { continue }
                guard let plain = compressed ? Self.inflate(body[cursor...]) : Data(body[cursor...]) else { continue }
                text = plain
            }
            if let block = Self.hexProfile(text) { return block }
        }
        return nil
    }

    /// The bytes of ImageMagick's raw profile text: name line, count line, hex digits.
    private static func hexProfile(_ text: Data) -> Data? {
        let lines = text.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: true)
        guard lines.count == 3, let count = Int(String(decoding: lines[1], as: UTF8.self).trimmingCharacters(in: .whitespaces)),
              count > 0, count <= 1 << 20 else { return nil }
        var bytes = Data(capacity: count), high: UInt8?
        for character in lines[2] {
            let nibble: UInt8
            switch character {
            case 0x30...0x39: nibble = character - 0x30
            case 0x61...0x66: nibble = character - 0x61 + 10
            case 0x41...0x46: nibble = character - 0x41 + 10
            default: continue
            }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
                if bytes.count == count { return bytes }
            } else {
                high = nibble
            }
        }
        return nil
    }

    /// A zlib stream inflated to at most 2 MB (1 MB in hex, with line breaks).
    private static func inflate(_ stream: Data) -> Data? {
        var out = wi_buffer()
        let status = stream.withBytePointer { wi_inflate($0, $1, 1 << 21, &out) }
        guard status == WI_OK else { return nil }
        return CodecBridge.takeData(&out)
    }

    /// The text of an iTXt chunk whose keyword is `XML:com.adobe.xmp` and that is not
    /// compressed: keyword, NUL, compression flag, method, language tag, NUL, translated
    /// keyword, NUL, text.
    static func xmpText(_ body: Data) -> Data? {
        let keyword = Data("XML:com.adobe.xmp\0".utf8)
        guard body.count > keyword.count + 2, body.prefix(keyword.count) == keyword else { return nil }
        var cursor = body.startIndex + keyword.count
        guard body[cursor] == 0 else { return nil }   // compressed XMP is not read
        cursor += 2
        for _ in 0..<2 {
            guard let nul = body[cursor...].firstIndex(of: 0) else { return nil }
            cursor = nul + 1
        }
        return body[cursor...]
    }
}

extension Data {
    /// The big-endian UInt32 at `offset`.
    func bigEndianUInt32(at offset: Int) -> UInt32 {
        let i = startIndex + offset
        return UInt32(self[i]) << 24 | UInt32(self[i + 1]) << 16 | UInt32(self[i + 2]) << 8 | UInt32(self[i + 3])
    }

    /// The big-endian UInt16 at `offset`.
    func bigEndianUInt16(at offset: Int) -> UInt16 {
        let i = startIndex + offset
        return UInt16(self[i]) << 8 | UInt16(self[i + 1])
    }

    mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }

    /// Appends a PNG chunk with its length and CRC.
    mutating func appendPNGChunk(type: String, data payload: some Collection<UInt8>) {
        appendBigEndian(UInt32(payload.count))
        var body = Data(type.utf8)
        body.append(contentsOf: payload)
        append(body)
        let crc = body.withBytePointer { wi_crc32(0, $0, $1) }
        appendBigEndian(crc)
    }
}

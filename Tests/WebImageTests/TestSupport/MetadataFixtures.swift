import Foundation
@testable import WebImage

/// Image files carrying every kind of metadata a camera, a phone or an editor writes, with
/// marker strings that must not survive stripping.
enum MetadataFixtures {
    static let secret = "SECRET-PLACE-52.3676N"
    static let xmpMarker = "x:xmpmeta SECRET-XMP"
    static let copyright = "(c) Ada Lovelace 2026"
    static let artist = "Ada Lovelace"

    /// Little-endian EXIF (TIFF) with an ImageDescription naming `secret`, Artist, Copyright,
    /// Orientation and a GPS IFD (latitude reference and a GPS processing method naming `secret`).
    static func exif(orientation: UInt16 = 1) -> Data {
        var out: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        func u16(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        let strings = [Array(secret.utf8) + [0], Array(artist.utf8) + [0], Array(copyright.utf8) + [0]]
        // IFD0: 5 entries, then the strings, then the GPS IFD.
        let ifd0End = 8 + 2 + 5 * 12 + 4
        var offsets: [Int] = []
        var next = ifd0End
        for s in strings { offsets.append(next); next += s.count }
        let gps = next
        u16(5)
        u16(0x010E); u16(2); u32(strings[0].count); u32(offsets[0])
        u16(0x0112); u16(3); u32(1); u16(Int(orientation)); u16(0)
        u16(0x013B); u16(2); u32(strings[1].count); u32(offsets[1])
        u16(0x8298); u16(2); u32(strings[2].count); u32(offsets[2])
        u16(0x8825); u16(4); u32(1); u32(gps)
        u32(0)
        for s in strings { out += s }
        let method = Array(("ASCII\0\0\0" + secret).utf8)
        u16(2)
        u16(0x0001); u16(2); u32(2); out += [0x4E, 0, 0, 0]   // GPSLatitudeRef "N"
        u16(0x001B); u16(7); u32(method.count); u32(gps + 2 + 2 * 12 + 4)
        u32(0)
        out += method
        return Data(out)
    }

    static var xmp: Data { Data("<?xpacket begin=\"\"?><\(xmpMarker)/><?xpacket end=\"w\"?>".utf8) }

    static func image(width: Int = 40, height: Int = 24) -> Image { Image(bitmap: Fixtures.gradient(width: width, height: height, opaque: true)) }

    /// A JPEG with JFIF, EXIF (GPS), XMP, Photoshop IPTC, a comment and a trailer after EOI.
    static func jpeg(orientation: UInt16 = 1, width: Int = 40, height: Int = 24) throws -> Data {
        let plain = try image(width: width, height: height).encoded(as: .jpeg)
        var out = Data(plain.prefix(2))
        func segment(_ marker: UInt8, _ payload: Data) {
            let length = payload.count + 2
            out.append(contentsOf: [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)])
            out.append(payload)
        }
        segment(0xE1, Data("Exif\0\0".utf8) + exif(orientation: orientation))
        segment(0xE1, Data("http://ns.adobe.com/xap/1.0/\0".utf8) + xmp)
        segment(0xED, Data("Photoshop 3.0\0".utf8) + Data("8BIM\u{04}\u{04}\0\0 IPTC \(secret)".utf8))
        segment(0xFE, Data("comment \(secret)".utf8))
        out.append(plain.dropFirst(2))
        out.append(Data("TRAILER MP4 \(secret)".utf8))
        return out
    }

    /// A PNG with eXIf, tEXt, iTXt (XMP), tIME and a private chunk.
    static func png() throws -> Data {
        let plain = try image().encoded(as: .png)
        let chunks = PNGChunks(plain)
        var out = Data(PNGChunks.signature)
        for chunk in chunks.chunks {
            out.append(plain[chunk.whole])
            if chunk.type == "IHDR" {
                out.appendPNGChunk(type: "eXIf", data: exif())
                out.appendPNGChunk(type: "tEXt", data: Data("Comment\0\(secret)".utf8))
                out.appendPNGChunk(type: "iTXt", data: Data("XML:com.adobe.xmp\0\0\0\0\0".utf8) + xmp)
                out.appendPNGChunk(type: "tIME", data: [0x07, 0xEA, 12, 5, 8, 0, 0])
                out.appendPNGChunk(type: "prVt", data: Data(secret.utf8))
            }
        }
        return out
    }

    /// An extended WebP (VP8X) with EXIF and XMP chunks.
    static func webp() throws -> Data {
        let plain = try image().encoded(as: .webp)
        func chunk(_ type: String, _ payload: Data) -> Data {
            var c = Data(type.utf8)
            let n = payload.count
            c.append(contentsOf: [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)])
            c.append(payload)
            if n % 2 == 1 { c.append(0) }
            return c
        }
        let (w, h) = (40 - 1, 24 - 1)
        let vp8x = Data([0x0C, 0, 0, 0, UInt8(w & 0xFF), UInt8(w >> 8), 0, UInt8(h & 0xFF), UInt8(h >> 8), 0])
        var body = Data("WEBP".utf8) + chunk("VP8X", vp8x)
        body.append(plain.dropFirst(12))   // the VP8 chunk
        body.append(chunk("EXIF", exif()))
        body.append(chunk("XMP ", xmp))
        let size = body.count
        return Data("RIFF".utf8) + Data([UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)]) + body
    }

    /// A GIF with a comment extension and an XMP application extension.
    static func gif() throws -> Data {
        let plain = try image().encoded(as: .gif)
        var start = 13
        if plain[plain.startIndex + 10] & 0x80 != 0 { start += 3 << (Int(plain[plain.startIndex + 10] & 0x07) + 1) }
        let comment = Data(secret.utf8)
        var out = plain.prefix(start)
        out.append(contentsOf: [0x21, 0xFE, UInt8(comment.count)]); out.append(comment); out.append(0)
        out.append(contentsOf: [0x21, 0xFF, 11]); out.append(Data("XMP DataXMP".utf8))
        out.append(UInt8(xmp.count)); out.append(xmp); out.append(0)
        out.append(plain.dropFirst(start))
        return out
    }

    /// Whether `data` holds `text` anywhere.
    static func contains(_ data: Data, _ text: String) -> Bool { data.range(of: Data(text.utf8)) != nil }
}

import Foundation
import Testing
@testable import WebImage

/// Orientation from XMP (`tiff:Orientation`) when a file has no EXIF orientation, in JPEG
/// (APP1), PNG (iTXt `XML:com.adobe.xmp`) and WebP (the `XMP ` chunk); EXIF wins when both are
/// there. Malformed, huge and lying packets are survived.
@Suite struct XMPOrientationTests {
    /// A 40x20 image whose left half is red, right half blue.
    static let bitmap: Bitmap = {
        var rgba: [UInt8] = []
        for _ in 0..<20 { for x in 0..<40 { rgba += x < 20 ? [255, 0, 0, 255] : [0, 0, 255, 255] } }
        return Bitmap(width: 40, height: 20, rgba: rgba)
    }()

    static func packet(_ orientation: String, element: Bool = false) -> Data {
        let property = element
            ? "<tiff:Orientation>\(orientation)</tiff:Orientation>"
            : "tiff:Orientation=\"\(orientation)\""
        let description = element ? "<rdf:Description rdf:about=\"\">\(property)</rdf:Description>"
            : "<rdf:Description rdf:about=\"\" xmlns:tiff=\"http://ns.adobe.com/tiff/1.0/\" \(property)/>"
        return Data("""
        <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        \(description)</rdf:RDF></x:xmpmeta><?xpacket end="w"?>
        """.utf8)
    }

    /// EXIF (TIFF, little-endian) with only the orientation tag.
    static func exif(_ orientation: UInt16) -> Data {
        Data([0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00,
              UInt8(orientation), 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
    }

    static func jpeg(xmp: Data?, exif: Data? = nil) throws -> Data {
        let plain = try Image(bitmap: bitmap).encoded(as: .jpeg)
        var out = Data(plain.prefix(2))
        func segment(_ payload: Data) {
            let length = payload.count + 2
            out.append(contentsOf: [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)])
            out.append(payload)
        }
        if let exif { segment(Data("Exif\0\0".utf8) + exif) }
        if let xmp { segment(Data("http://ns.adobe.com/xap/1.0/\0".utf8) + xmp) }
        return out + plain.dropFirst(2)
    }

    static func chunk(_ type: String, _ body: Data) -> Data { APNGEncoder.chunk(type, [UInt8](body)) }

    static func png(xmp: Data?, exif: Data? = nil, compressed: Bool = false) throws -> Data {
        let plain = try Image(bitmap: bitmap).encoded(as: .png)
        let header = PNGChunks(plain).chunks[0].whole
        var extra = Data()
        if let exif { extra += chunk("eXIf", exif) }
        if let xmp { extra += chunk("iTXt", Data("XML:com.adobe.xmp\0".utf8) + Data([compressed ? 1 : 0, 0, 0, 0]) + xmp) }
        return plain.prefix(header.upperBound) + extra + plain.dropFirst(header.upperBound)
    }

    /// An extended WebP: VP8X (with the XMP and EXIF flags), the image chunk, EXIF and XMP chunks.
    static func webp(xmp: Data?, exif: Data? = nil) throws -> Data {
        let plain = try Image(bitmap: bitmap).encoded(as: .webp)
        let image = plain.dropFirst(12)   // after RIFF size WEBP
        func riffChunk(_ fourcc: String, _ body: Data) -> Data {
            var size = UInt32(body.count).littleEndian
            return Data(fourcc.utf8) + Data(bytes: &size, count: 4) + body + (body.count % 2 == 1 ? Data([0]) : Data())
        }
        var flags: UInt8 = 0
        if xmp != nil { flags |= 0x04 }
        if exif != nil { flags |= 0x08 }
        let w = UInt32(bitmap.width - 1), h = UInt32(bitmap.height - 1)
        let vp8x = Data([flags, 0, 0, 0, UInt8(w & 0xFF), UInt8((w >> 8) & 0xFF), UInt8(w >> 16),
                         UInt8(h & 0xFF), UInt8((h >> 8) & 0xFF), UInt8(h >> 16)])
        var body = Data("WEBP".utf8) + riffChunk("VP8X", vp8x) + image
        if let exif { body += riffChunk("EXIF", exif) }
        if let xmp { body += riffChunk("XMP ", xmp) }
        var size = UInt32(body.count).littleEndian
        return Data("RIFF".utf8) + Data(bytes: &size, count: 4) + body
    }

    /// Orientation 6 turns the 40x20 image into 20x40 with red on top.
    func expectTurned(_ data: Data, _ label: String, orientation: Int = 6) throws {
        let image = try Image(data: data)
        #expect(image.exifOrientation == orientation, "\(label): \(String(describing: image.exifOrientation))")
        #expect(image.width == 20 && image.height == 40, "\(label): \(image.width)x\(image.height)")
        #expect(image.bitmap[10, 5].r > 200 && image.bitmap[10, 35].b > 200, "\(label): red on top, blue below")
    }

    @Test func xmpOrientationIsAppliedInJPEGPNGAndWebP() throws {
        for element in [false, true] {
            let xmp = Self.packet("6", element: element)
            try expectTurned(Self.jpeg(xmp: xmp), "JPEG element: \(element)")
            try expectTurned(Self.png(xmp: xmp), "PNG element: \(element)")
            try expectTurned(Self.webp(xmp: xmp), "WebP element: \(element)")
        }
        // Raw orientation keeps the pixels and still reports the tag.
        let raw = try Image(data: Self.png(xmp: Self.packet("6")), options: ImageDecodingOptions(appliesOrientation: false))
        #expect(raw.width == 40 && raw.exifOrientation == 6)
    }

    @Test func exifWinsOverXMP() throws {
        let xmp = Self.packet("3"), exif = Self.exif(6)
        try expectTurned(Self.jpeg(xmp: xmp, exif: exif), "JPEG")
        try expectTurned(Self.png(xmp: xmp, exif: exif), "PNG")
        try expectTurned(Self.webp(xmp: xmp, exif: exif), "WebP")
    }

    @Test func malformedHugeAndLyingPacketsAreIgnoredWithoutHarm() throws {
        let bad: [Data] = [
            Data("tiff:Orientation=\"9\"".utf8), Data("tiff:Orientation=\"66\"".utf8), Data("tiff:Orientation=6".utf8),
            Data("tiff:Orientation=\"".utf8), Data("<tiff:Orientation>".utf8), Data("tiff:Orientation".utf8),
            Data("<tiff:Orientation>0</tiff:Orientation>".utf8), Data(), Data([0xFF, 0x00, 0xFE]),
            Data(repeating: 0x41, count: 5 << 20) + Data("tiff:Orientation=\"6\"".utf8),   // past the scan limit
        ]
        for (index, xmp) in bad.enumerated() {
            #expect(XMPReader.orientation(xmp) == nil, "packet \(index)")
            for data in [try Self.png(xmp: xmp), try Self.webp(xmp: xmp)] {
                let image = try Image(data: data)
                #expect(image.width == 40 && image.exifOrientation == nil, "packet \(index)")
            }
        }
        // A huge packet in a JPEG does not fit one segment: the segment's length lies.
        var lying = try Self.jpeg(xmp: Self.packet("6"))
        lying[4] = 0xFF; lying[5] = 0xFF
        _ = try? Image(data: lying)
        // Compressed iTXt is not read (and does not break the decode).
        let compressed = try Image(data: Self.png(xmp: Self.packet("6"), compressed: true))
        #expect(compressed.width == 40 && compressed.exifOrientation == nil)
        // Truncations of files with XMP never crash.
        for data in [try Self.jpeg(xmp: Self.packet("6")), try Self.png(xmp: Self.packet("6")), try Self.webp(xmp: Self.packet("6"))] {
            for length in stride(from: 0, to: data.count, by: max(1, data.count / 40)) { _ = try? Image(data: data.prefix(length)) }
        }
        #expect(XMPReader.orientation(Data("a tiff:Orientation = ' 6' b tiff:Orientation='8'".utf8)) == 8)
    }
}

import Foundation
import Testing
@testable import WebImage

/// `ExifProperties` read from EXIF blocks written here, tag by tag as the EXIF 2.32 standard lays
/// them out (the values Pillow's `getexif()` and exiftool print for the same blocks), and from
/// hostile blocks: loops, lying counts and offsets, overflowing sizes, wrong types.
@Suite struct ExifPropertiesTests {
    /// One directory entry's value.
    enum Value {
        case ascii(String), byte(Int), short(Int), long(Int)
        case rational([(Int, Int)]), srational([(Int, Int)])
        /// The offset of directory `index` (a sub-IFD pointer, written as a LONG).
        case directory(Int)
        /// Raw: type, count and the value's bytes (to write lies).
        case raw(type: Int, count: Int, bytes: [UInt8])
    }

    /// A little-endian TIFF block: the header, then each directory followed by its values'
    /// data; directory 0 is IFD0.
    static func block(_ directories: [[(Int, Value)]]) -> [UInt8] {
        func encoded(_ value: Value, offsets: [Int]) -> (type: Int, count: Int, bytes: [UInt8]) {
            func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
            switch value {
            case .ascii(let text): return (2, text.utf8.count + 1, Array(text.utf8) + [0])
            case .byte(let v): return (1, 1, [UInt8(v)])
            case .short(let v): return (3, 1, le(v, 2))
            case .long(let v): return (4, 1, le(v, 4))
            case .rational(let values): return (5, values.count, values.flatMap { le($0.0, 4) + le($0.1, 4) })
            case .srational(let values): return (10, values.count, values.flatMap { le($0.0, 4) + le($0.1, 4) })
            case .directory(let index): return (4, 1, le(offsets.indices.contains(index) ? offsets[index] : 0, 4))
            case .raw(let type, let count, let bytes): return (type, count, bytes)
            }
        }
        func size(_ directory: [(Int, Value)]) -> Int {
            2 + directory.count * 12 + 4 + directory.reduce(0) { total, entry in
                let bytes = encoded(entry.1, offsets: []).bytes.count
                return total + (bytes > 4 ? bytes + bytes % 2 : 0)
            }
        }
        var offsets: [Int] = [], at = 8
        for directory in directories {
            offsets.append(at)
            at += size(directory)
        }
        var out: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        for (index, directory) in directories.enumerated() {
            func u16(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
            func u32(_ v: Int) { out += (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
            var data: [UInt8] = []
            let dataStart = offsets[index] + 2 + directory.count * 12 + 4
            u16(directory.count)
            for (tag, value) in directory {
                let (type, count, bytes) = encoded(value, offsets: offsets)
                u16(tag); u16(type); u32(count)
                if bytes.count <= 4 {
                    out += bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
                } else {
                    u32(dataStart + data.count)
                    data += bytes + (bytes.count % 2 == 1 ? [0] : [])
                }
            }
            u32(0)
            out += data
        }
        return out
    }

    @Test func aCamerasTagsReadAsValues() throws {
        let tiff = Self.block([
            [(0x010F, .ascii("Canon")), (0x0110, .ascii("Canon EOS R5   ")), (0x0112, .short(6)), (0x0131, .ascii("Darktable 4.6")),
             (0x0132, .ascii("2024:03:16 09:00:00")), (0x013B, .ascii("A. Photographer")), (0x8298, .ascii("(c) 2024")),
             (0x8769, .directory(1)), (0x8825, .directory(2))],
            [(0x829A, .rational([(1, 125)])), (0x829D, .rational([(28, 10)])), (0x8827, .short(400)),
             (0x9003, .ascii("2024:03:15 14:30:05")), (0x9004, .ascii("2024:03:15 14:30:06")), (0x9011, .ascii("+02:00")),
             (0x920A, .rational([(50, 1)])), (0xA433, .ascii("Canon")), (0xA434, .ascii("RF50mm F1.8 STM"))],
            [(1, .ascii("S")), (2, .rational([(33, 1), (51, 1), (312, 10)])), (3, .ascii("E")),
             (4, .rational([(151, 1), (12, 1), (3, 1)])), (5, .byte(1)), (6, .rational([(125, 10)]))],
        ])
        let exif = try #require(ExifProperties(tiff: tiff))
        #expect(exif.make == "Canon" && exif.model == "Canon EOS R5" && exif.software == "Darktable 4.6")
        #expect(exif.orientation == .right && exif.artist == "A. Photographer" && exif.copyright == "(c) 2024")
        #expect(exif.dateTime == "2024:03:16 09:00:00" && exif.dateTimeOriginal == "2024:03:15 14:30:05")
        #expect(exif.dateTimeDigitized == "2024:03:15 14:30:06" && exif.offsetTimeOriginal == "+02:00")
        #expect(exif.exposureTime == 1.0 / 125 && exif.fNumber == 2.8 && exif.isoSpeed == 400 && exif.focalLength == 50)
        #expect(exif.lensMake == "Canon" && exif.lensModel == "RF50mm F1.8 STM")
        let gps = try #require(exif.gps)
        #expect(abs(gps.latitude - -(33 + 51.0 / 60 + 31.2 / 3600)) < 1e-12)
        #expect(abs(gps.longitude - (151 + 12.0 / 60 + 3.0 / 3600)) < 1e-12)
        #expect(gps.altitude == -12.5)
        // 14:30:05 at UTC+2 is 12:30:05 UTC.
        #expect(exif.captureDate == Date(timeIntervalSince1970: 1_710_505_805))
        // The same block behind the `Exif\0\0` prefix of a JPEG's APP1 segment.
        #expect(ExifProperties(tiff: Array("Exif\0\0".utf8) + tiff) == exif)
    }

    @Test func aCaptureDateNeedsAWellFormedDateAndOffset() throws {
        func date(_ original: String, _ offset: String?) -> Date? {
            var values: [(Int, Value)] = [(0x9003, .ascii(original))]
            if let offset { values.append((0x9011, .ascii(offset))) }
            return ExifProperties(tiff: Self.block([[(0x8769, .directory(1))], values]))?.captureDate
        }
        #expect(date("2024:03:15 14:30:05", "-05:30") == Date(timeIntervalSince1970: 1_710_532_805))
        #expect(date("2024:03:15 14:30:05", nil) == nil, "local time names no instant")
        #expect(date("2024:02:30 14:30:05", "+00:00") == nil, "no 30 February")
        #expect(date("2024:03:15 14:30", "+00:00") == nil)
        #expect(date("2024:03:15 14:30:05", "+2:00") == nil)
        #expect(date("    :  :     :  :  ", "+00:00") == nil, "EXIF's blank date")
        #expect(date("2024:03:15 14:30:05", "+99:00") == nil, "no such time zone")
        #expect(date("2024:13:15 14:30:05", "+00:00") == nil)
        #expect(date("2024:03:15 25:30:05", "+00:00") == nil)
        #expect(date("2024:03:15 14:61:05", "+00:00") == nil)
        #expect(date("2024:03:15 14:30:05", "+14:00") == Date(timeIntervalSince1970: 1_710_462_605))
    }

    @Test func hostileBlocksGiveNilsNeverACrashOrAHang() throws {
        // A sub-IFD pointing back at IFD0, and IFD0 pointing at itself as its GPS directory.
        let loop = Self.block([[(0x0112, .short(3)), (0x8769, .directory(0)), (0x8825, .directory(0))]])
        #expect(ExifProperties(tiff: loop)?.orientation == .down)
        #expect(ExifProperties(tiff: loop)?.gps == nil)
        // Wrong types, out-of-range values, a zero denominator.
        let odd = Self.block([[(0x0112, .ascii("6")), (0x010F, .short(7)), (0x8769, .directory(1))],
                              [(0x829A, .rational([(1, 0)])), (0x829D, .srational([(-28, 10)])), (0x8827, .ascii("400"))]])
        #expect(ExifProperties(tiff: odd) == nil, "nothing of the expected types")
        #expect(ExifProperties(tiff: Self.block([[(0x0112, .short(9))]])) == nil)
        #expect(ExifProperties(tiff: Self.block([[(0x0112, .short(0))]])) == nil)
        // Counts and offsets that lie: past the block, overflowing, over 64 KB.
        let lies = Self.block([[
            (0x010F, .raw(type: 2, count: 50, bytes: [0xFF, 0xFF, 0x00, 0x00])),        // offset 65535
            (0x0110, .raw(type: 5, count: 0x7FFF_FFFF, bytes: [8, 0, 0, 0])),           // 16 GB of rationals
            (0x0131, .raw(type: 2, count: 100_000, bytes: [8, 0, 0, 0])),               // 100 KB of text
            (0x0112, .raw(type: 3, count: 1, bytes: [6, 0, 0, 0])),
            (0x8769, .raw(type: 4, count: 1, bytes: [0xF0, 0xFF, 0xFF, 0x7F])),         // a sub-IFD far away
        ]])
        let read = try #require(ExifProperties(tiff: lies))
        #expect(read.make == nil && read.model == nil && read.software == nil && read.orientation == .right)
        // A directory that claims 65,535 entries in a 30-byte block; headers that are not TIFF.
        var many = Self.block([[(0x0112, .short(1))]])
        many[8] = 0xFF; many[9] = 0xFF
        #expect(ExifProperties(tiff: many) == nil)
        #expect(ExifProperties(tiff: [UInt8]("II*\0".utf8)) == nil)
        #expect(ExifProperties(tiff: [0x4D, 0x4D, 0, 43, 0, 0, 0, 8]) == nil)
        #expect(ExifProperties(tiff: []) == nil)
    }

    @Test func aJPEGsEXIFAndXMPAreReadWithoutItsPixels() throws {
        // A JPEG of ours with an APP1 EXIF segment and an XMP segment spliced after SOI.
        let jpeg = try Image(bitmap: Fixtures.gradient(width: 32, height: 16, opaque: true)).encoded(as: .jpeg)
        let tiff = Self.block([[(0x0112, .short(8)), (0x010F, .ascii("Nikon"))]])
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        let packet = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF/></x:xmpmeta>"#
        var spliced = Data(jpeg.prefix(2))
        spliced += segment(0xE1, Array("Exif\0\0".utf8) + tiff)
        spliced += segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array(packet.utf8))
        spliced += jpeg.dropFirst(2)
        let metadata = ImageMetadata(reading: spliced)
        #expect(metadata.exif?.make == "Nikon" && metadata.orientation == .left)
        #expect(metadata.xmp == packet)
        #expect(metadata.iccProfile == nil)
        // Stripped, none of it is left.
        let stripped = try #require(ImageMetadata.stripped(spliced, format: .jpeg))
        #expect(ImageMetadata(reading: stripped) == ImageMetadata())
        #expect(ImageMetadata(reading: Data("not an image".utf8)) == ImageMetadata())
    }
}

/// HEIF and AVIF metadata boxes cut short or lying: read as nothing, never past their box.
@Suite struct ISOBMFFMetadataBoundsTests {
    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let size = body.count + 8
        return [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array(type.utf8) + body
    }

    @Test func shortAndLyingBoxesReadAsNothing() {
        let ftyp = Self.box("ftyp", Array("avif".utf8) + [0, 0, 0, 0] + Array("avifmif1".utf8))
        // meta (version and flags), then an iinf and an iloc each shorter than their headers.
        for version: UInt8 in [0, 1, 2, 3] {
            for length in 0...9 {
                let iinf = Self.box("iinf", Array(([version, 0, 0, 0, 0, 1, 0, 0, 0] as [UInt8]).prefix(length)))
                let iloc = Self.box("iloc", Array(([version, 0, 0, 0, 0x44, 0x40, 0, 0, 0, 1] as [UInt8]).prefix(length)))
                let meta = Self.box("meta", [0, 0, 0, 0] + iinf + iloc)
                let metadata = ImageMetadata(reading: Data(ftyp + meta))
                #expect(metadata.exifData == nil && metadata.xmp == nil && metadata.iccProfile == nil)
            }
        }
        // An Exif item whose extent lies past the end of the file.
        let infe = Self.box("infe", [2, 0, 0, 0, 0, 1, 0, 0] + Array("Exif".utf8))
        let iinf = Self.box("iinf", [0, 0, 0, 0, 0, 1] + infe)
        let iloc = Self.box("iloc", [0, 0, 0, 0, 0x44, 0x00, 0, 1, 0, 1, 0, 0, 0, 1, 0x7F, 0xFF, 0xFF, 0xF0, 0, 0, 0, 0x40])
        let metadata = ImageMetadata(reading: Data(ftyp + Self.box("meta", [0, 0, 0, 0] + iinf + iloc)))
        #expect(metadata == ImageMetadata())
    }
}

import Foundation
import Testing
@testable import WebImage

/// `ImageMetadata.stripped`: EXIF (GPS included), XMP, IPTC, comments and trailers gone, the
/// image data byte for byte the same, the colour profile kept, copyright kept when asked.
@Suite struct ImageMetadataTests {
    typealias F = MetadataFixtures

    static func pixels(_ data: Data) throws -> Bitmap { try ImageCoders.shared.decode(data).bitmap }

    static func expectNothingPrivate(_ data: Data, _ format: ImageFormat, sourceLocation: SourceLocation = #_sourceLocation) {
        for marker in [F.secret, "SECRET-XMP", "Photoshop", "TRAILER"] {
            #expect(!F.contains(data, marker), "\(format) still holds \(marker)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [ImageFormat.jpeg, .png, .webp, .gif])
    func everyPrivateBlockIsRemovedAndThePixelsStay(_ format: ImageFormat) throws {
        let source: Data = switch format {
        case .jpeg: try F.jpeg()
        case .png: try F.png()
        case .webp: try F.webp()
        default: try F.gif()
        }
        #expect(F.contains(source, F.secret))
        let stripped = try #require(ImageMetadata.stripped(source, format: format))
        Self.expectNothingPrivate(stripped, format)
        #expect(!F.contains(stripped, F.copyright))
        #expect(stripped.count < source.count)
        #expect(try Self.pixels(stripped) == Self.pixels(source), "the image data is untouched")
        #expect(ImageFormat(sniffing: stripped) == format)
    }

    @Test(arguments: [ImageFormat.jpeg, .png, .webp])
    func copyrightAndArtistAloneStayWhenAsked(_ format: ImageFormat) throws {
        let source: Data = switch format {
        case .jpeg: try F.jpeg()
        case .png: try F.png()
        default: try F.webp()
        }
        let stripped = try #require(ImageMetadata.stripped(source, format: format, keepingCopyright: true))
        Self.expectNothingPrivate(stripped, format)
        #expect(F.contains(stripped, F.copyright) && F.contains(stripped, F.artist))
        let block: Data? = switch format {
        case .jpeg: JPEGSegments.exifBlock(stripped)
        case .png: PNGChunks(stripped).exifBlock(in: stripped)
        default: WebPCoder.chunk("EXIF", in: stripped)
        }
        let exif = try #require(block.flatMap(ExifCopyright.init(tiff:)))
        #expect(exif.copyright == Array(F.copyright.utf8) && exif.artist == Array(F.artist.utf8))
        #expect(ExifReader.orientation(tiff: try #require(block)) == nil, "only the copyright tags")
        #expect(try Self.pixels(stripped) == Self.pixels(source))
    }

    @Test func theColourProfileStays() throws {
        for (name, format) in [("icc/jpeg_displayp3.jpg", ImageFormat.jpeg), ("icc/png_displayp3.png", .png)] {
            let source = try ModernCorpus.data(name)
            let stripped = try #require(ImageMetadata.stripped(source, format: format))
            let original = ImageMetadata.colorInfo(of: source, format: format)
            #expect(original.iccProfile != nil)
            #expect(ImageMetadata.colorInfo(of: stripped, format: format) == original, "\(name)")
        }
    }

    @Test func aFileWithoutMetadataComesBackAsItWas() throws {
        let png = try F.image().encoded(as: .png)
        #expect(ImageMetadata.stripped(png, format: .png) == png)
        let jpeg = try F.image().encoded(as: .jpeg)
        let stripped = try #require(ImageMetadata.stripped(jpeg, format: .jpeg))
        #expect(try Self.pixels(stripped) == Self.pixels(jpeg))
    }

    @Test func progressiveJPEGsScansAndMarkersBetweenThemAreFollowed() throws {
        // A progressive JPEG has several scans with tables between them; a comment between two
        // scans is removed too.
        let progressive = try ImageCoders.shared.encode(F.image(width: 64, height: 40), as: .jpeg, options: ImageEncodingOptions(progressive: true))
        let sos = try #require(Self.secondScan(progressive))
        var planted = progressive.prefix(sos)
        let note = Data("between \(F.secret)".utf8)
        planted.append(contentsOf: [0xFF, 0xFE, UInt8((note.count + 2) >> 8), UInt8((note.count + 2) & 0xFF)])
        planted.append(note)
        planted.append(progressive.dropFirst(sos))
        let stripped = try #require(ImageMetadata.stripped(Data(planted), format: .jpeg))
        #expect(!F.contains(stripped, F.secret))
        #expect(stripped == progressive, "what is left is the encoder's file")
    }

    /// Where the second SOS marker of `jpeg` starts.
    static func secondScan(_ jpeg: Data) -> Int? {
        var found = 0
        let bytes = [UInt8](jpeg)
        for i in 0..<(bytes.count - 1) where bytes[i] == 0xFF && bytes[i + 1] == 0xDA {
            found += 1
            if found == 2 { return i }
        }
        return nil
    }

    /// The metadata fuzzer's first finding: a JPEG whose scan ends the file in fill bytes lost
    /// its last byte, so a second strip changed the file again.
    @Test func aFileEndingInsideItsScanKeepsEveryByteOfIt() throws {
        let finding = try Data(contentsOf: FuzzFindingsTests.directory.appendingPathComponent("metadata-crash-8605c58b5c1eaa62304ad2ca83032aff7f37b3eb"))
        let once = try #require(ImageMetadata.stripped(finding, format: .jpeg))
        #expect(ImageMetadata.stripped(once, format: .jpeg) == once)
        #expect(once.suffix(7) == finding.suffix(7), "the scan's bytes to the end")
        #expect(!F.contains(once, "first") && !F.contains(once, "second"), "both EXIF blocks removed")
    }

    @Test func brokenOrForeignFilesAreRefusedNotGuessed() throws {
        let jpeg = try F.jpeg()
        #expect(ImageMetadata.stripped(Data([0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 0]), format: .jpeg) == nil, "a segment past the end")
        #expect(ImageMetadata.stripped(jpeg.prefix(40), format: .jpeg) == nil)
        #expect(ImageMetadata.stripped(Data("not a png".utf8), format: .png) == nil)
        #expect(ImageMetadata.stripped(try F.png().prefix(60), format: .png) == nil)
        #expect(ImageMetadata.stripped(Data("RIFF0000WEBPjunk".utf8), format: .webp) == nil)
        #expect(ImageMetadata.stripped(try F.gif().prefix(30), format: .gif) == nil)
        #expect(ImageMetadata.stripped(jpeg, format: .avif) == nil, "not a format rewritten here")
        // Truncations anywhere never crash.
        for format in [ImageFormat.jpeg, .png, .webp, .gif] {
            let file: Data = switch format {
            case .jpeg: jpeg
            case .png: try F.png()
            case .webp: try F.webp()
            default: try F.gif()
            }
            for cut in stride(from: 0, to: file.count, by: 7) { _ = ImageMetadata.stripped(file.prefix(cut), format: format) }
        }
    }
}

import Foundation
import Testing
@testable import WebImage

/// Encoders keep a source's metadata when the call asks (``ImageEncodingOptions/metadata``) and
/// write none by default, as SDWebImage's encoders do (its SDImageCoderTests check that an
/// encoded image carries no source properties unless given them); what they write is read back
/// by our reader and by Pillow.
@Suite(.timeLimit(.minutes(2))) struct MetadataWritingTests {
    static let packet = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta>"#

    /// A corpus photo's metadata (GPS, camera, dates, ICC) with an XMP packet added.
    static func source() throws -> (data: Data, metadata: ImageMetadata) {
        let data = try Corpus.data("jpeg/image-p3.jpg")
        var metadata = ImageMetadata(reading: data)
        metadata.xmp = packet
        return (data, metadata)
    }

    /// Pillow (with its plug-ins) reads `exif`'s capture date and GPS latitude from `file`.
    static func expectPillowReads(_ file: Data, format: ImageFormat, _ exif: ExifProperties,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let path = dir.url.appendingPathComponent("kept.\(format.fileExtension)").path
        try file.write(to: URL(fileURLWithPath: path))
        let pillow = try #require(try MetadataReadingTests.pillowReadings([path])[path], sourceLocation: sourceLocation)
        #expect(pillow["36867"] as? String == exif.dateTimeOriginal, sourceLocation: sourceLocation)
        let latitude = try #require(pillow["gps2"] as? [Double], sourceLocation: sourceLocation)
        #expect(abs((latitude[0] + latitude[1] / 60 + latitude[2] / 3600) - abs(exif.gps?.latitude ?? 0)) < 1e-9,
                sourceLocation: sourceLocation)
    }

    @Test(arguments: [ImageFormat.jpeg, .png, .webp])
    func aSourcesMetadataIsKeptWhenAskedAndReadsBackTheSame(format: ImageFormat) throws {
        let (data, metadata) = try Self.source()
        let exif = try #require(metadata.exif)
        #expect(exif.gps != nil && exif.dateTimeOriginal != nil)
        let image = try ImageCoders.shared.decode(data, options: ImageDecodingOptions(maxPixelSize: 200))
        let kept = try ImageCoders.shared.encode(image, as: format, options: ImageEncodingOptions(metadata: metadata))
        let read = ImageMetadata(reading: kept)
        #expect(read.exif == exif)
        #expect(read.xmp == Self.packet)
        #expect(try ImageCoders.shared.decode(kept).width == image.width)
        // Pillow reads the same GPS position and date.
        try Self.expectPillowReads(kept, format: format, exif)
        // By default, none of it: no EXIF, no XMP.
        let plain = try ImageCoders.shared.encode(image, as: format)
        let none = ImageMetadata(reading: plain)
        #expect(none.exif == nil && none.exifData == nil && none.xmp == nil)
        #expect(read.iccProfile == none.iccProfile, "the profile follows the image's colour, not this option")
    }

    /// AVIF and HEIC (`Exif` and `mime` XMP items, through libavif and libheif) and JPEG XL (`Exif` and `xml `
    /// boxes through libjxl): kept when asked, read back the same by our reader and by Pillow's
    /// plug-ins, none by default.
    @Test(arguments: [ImageFormat.avif, .heic, .jxl])
    func theModernEncodersKeepTheMetadataWhenAsked(format: ImageFormat) throws {
        let (data, metadata) = try Self.source()
        let coders = ModernCorpus.coders
        let image = try coders.decode(data, options: ImageDecodingOptions(maxPixelSize: 64))
        let kept = try coders.encode(image, as: format, options: ImageEncodingOptions(quality: 0.5, metadata: metadata))
        let read = ImageMetadata(reading: kept)
        #expect(read.exif == metadata.exif)
        #expect(read.xmp == Self.packet)
        #expect(try coders.decode(kept).width == image.width)
        // Pillow's plug-ins read the same date and GPS position.
        try Self.expectPillowReads(kept, format: format, try #require(metadata.exif))
        let plain = ImageMetadata(reading: try coders.encode(image, as: format, options: ImageEncodingOptions(quality: 0.5)))
        #expect(plain.exif == nil && plain.xmp == nil)
    }

    @Test func theOrientationIsUpOnceThePixelsWereTurned() throws {
        let data = try Corpus.data("jpeg/hopper_orientation_6.jpg")
        let metadata = ImageMetadata(reading: data)
        #expect(metadata.orientation == .right)
        let turned = try ImageCoders.shared.decode(data)
        #expect(turned.isOrientationApplied)
        let kept = try ImageCoders.shared.encode(turned, as: .jpeg, options: ImageEncodingOptions(metadata: metadata))
        #expect(ImageMetadata(reading: kept).orientation == .up)
        // Decoded as stored, the tag still describes the pixels: it stays.
        let stored = try ImageCoders.shared.decode(data, options: ImageDecodingOptions(appliesOrientation: false))
        let asStored = try ImageCoders.shared.encode(stored, as: .jpeg, options: ImageEncodingOptions(metadata: metadata))
        #expect(ImageMetadata(reading: asStored).orientation == .right)
        // Either way our decoder shows them the same way round.
        #expect(try ImageCoders.shared.decode(kept).width == turned.width)
        #expect(try ImageCoders.shared.decode(asStored).width == turned.width)
    }

    @Test func animationsKeepTheirFramesAndTheMetadata() throws {
        let (_, metadata) = try Self.source()
        let frames = (0..<3).map { index in
            ImageFrame(bitmap: Bitmap(width: 8, height: 8, rgba: [UInt8](repeating: UInt8(60 * index), count: 256)), duration: 0.1)
        }
        let animation = Image(frames: frames, loopCount: 0)
        for format in [ImageFormat.png, .webp] {
            let kept = try ImageCoders.shared.encode(animation, as: format, options: ImageEncodingOptions(metadata: metadata))
            #expect(ImageMetadata(reading: kept).exif == metadata.exif, "\(format)")
            #expect(try ImageCoders.shared.decode(kept).frameCount == 3, "\(format)")
        }
    }

    @Test func metadataAFormatCannotHoldIsRefusedNotDropped() throws {
        let (_, metadata) = try Self.source()
        let image = Image(bitmap: Fixtures.gradient(width: 16, height: 16))
        #expect(throws: ImageError.self) { try ImageCoders.shared.encode(image, as: .gif, options: ImageEncodingOptions(metadata: metadata)) }
        #expect(throws: ImageError.self) { try ImageCoders.shared.encode(image, as: .bmp, options: ImageEncodingOptions(metadata: metadata)) }
        // An empty metadata value asks for nothing.
        #expect(try ImageCoders.shared.encode(image, as: .gif, options: ImageEncodingOptions(metadata: ImageMetadata())).isEmpty == false)
        // XMP over a JPEG segment's 64 KB is refused for JPEG, written in PNG.
        var large = ImageMetadata()
        large.xmp = String(repeating: "x", count: 70_000)
        let error = #expect(throws: ImageError.self) { try ImageCoders.shared.encode(image, as: .jpeg, options: ImageEncodingOptions(metadata: large)) }
        #expect("\(String(describing: error))".contains("64 KB"))
        let png = try ImageCoders.shared.encode(image, as: .png, options: ImageEncodingOptions(metadata: large))
        #expect(ImageMetadata(reading: png).xmp == large.xmp)
    }
}

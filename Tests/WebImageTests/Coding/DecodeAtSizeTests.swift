import Foundation
import Testing
@testable import WebImage

@Suite struct DecodeAtSizeTests {
    static let photo: Data = {
        let image = Image(bitmap: Fixtures.gradient(width: 1600, height: 1200, opaque: true))
        return try! image.encoded(as: .jpeg, quality: 0.9)
    }()

    @Test func jpegUsesDCTScalingAndFitsTheTarget() throws {
        let small = try Image(data: Self.photo, options: ImageDecodingOptions(maxPixelSize: 256))
        #expect(small.width == 256 && small.height == 192)
        let full = try Image(data: Self.photo)
        let reference = full.bitmap.areaDownscaled(toWidth: 256, height: 192)
        #expect(Fixtures.meanDifference(small.bitmap, reference) < 2)
        // Exactly 1/8 needs no resampling at all.
        let eighth = try Image(data: Self.photo, options: ImageDecodingOptions(maxPixelSize: 200))
        #expect(eighth.width == 200 && eighth.height == 150)
    }

    @Test func neverEnlarges() throws {
        let image = try Image(data: Self.photo, options: ImageDecodingOptions(maxPixelSize: 5000))
        #expect(image.width == 1600 && image.height == 1200)
    }

    @Test func webpPNGAndGIFFitTheTarget() throws {
        for (path, expected) in [("webp/1.webp", (100, 67)), ("png/basn6a08.png", (16, 16)), ("gif/chi.gif", (100, 75)),
                                 ("webp/TestImageAnimated.webp", nil)] as [(String, (Int, Int)?)] {
            let image = try Image(data: try Corpus.data(path), options: ImageDecodingOptions(maxPixelSize: path.contains("basn") ? 16 : 100))
            #expect(max(image.width, image.height) <= 100)
            if let expected { #expect(image.width == expected.0 && image.height == expected.1, "\(path)") }
            if image.isAnimated { #expect(try image.frame(at: 1).bitmap.width == image.width) }
        }
    }

    @Test func orientationIsAppliedAfterScaling() throws {
        let data = try Corpus.data("jpeg/hopper_orientation_6.jpg")
        let raw = try Image(data: data, options: ImageDecodingOptions(appliesOrientation: false))
        let upright = try Image(data: data, options: ImageDecodingOptions(maxPixelSize: 32))
        #expect(raw.exifOrientation == 6 && !raw.isOrientationApplied)
        #expect(upright.isOrientationApplied)
        #expect(max(upright.width, upright.height) == 32)
        #expect((upright.width > upright.height) == (raw.height > raw.width))
    }
}

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

    @Test func aFillSizeKeepsTheSmallestSizeThatCoversTheBox() throws {
        func target(_ w: Int, _ h: Int, fill: PixelSize, max: Int? = nil, orientation: Int? = nil) -> (Int, Int) {
            let size = ImageDecodingOptions(maxPixelSize: max, fillSize: fill).targetSize(width: w, height: h, exifOrientation: orientation)
            return (size.width, size.height)
        }
        #expect(target(4000, 3000, fill: PixelSize(width: 300, height: 300)) == (400, 300), "the short side decides")
        #expect(target(4000, 3000, fill: PixelSize(width: 300, height: 100)) == (300, 225), "the wide box: the width decides")
        #expect(target(1000, 3, fill: PixelSize(width: 100, height: 0)) == (100, 1), "a free side, never below one pixel")
        #expect(target(800, 600, fill: PixelSize(width: 100, height: 100)) == (134, 100), "rounded up: the box stays filled")
        #expect(target(400, 300, fill: PixelSize(width: 500, height: 10)) == (400, 300), "never enlarged")
        #expect(target(4000, 3000, fill: PixelSize(width: 300, height: 300), max: 200) == (200, 150), "a smaller maximum wins")
        // Stored 3000x4000 and turned by orientation 6: the box is of the upright 4000x3000 image.
        #expect(target(3000, 4000, fill: PixelSize(width: 300, height: 100), orientation: 6) == (225, 300))
        #expect(target(3000, 4000, fill: PixelSize(width: 300, height: 100), orientation: 1) == (300, 400))
    }

    @Test func aFillDecodeUsesDCTScalingAndFillsTheBox() throws {
        var options = ImageDecodingOptions()
        options.fillSize = PixelSize(width: 150, height: 150)
        #expect(JPEGCoder.dctScale(width: 1600, height: 1200, options: options) == 1, "1/8 is 200x150: it fills 150x150")
        options.fillSize = PixelSize(width: 300, height: 100)
        #expect(JPEGCoder.dctScale(width: 1600, height: 1200, options: options) == 2, "300 wide needs 2/8")
        // Only the scales with SIMD inverse DCTs: 3/8 becomes 4/8, and 5/8 to 7/8 a full decode.
        options.fillSize = PixelSize(width: 500, height: 0)
        #expect(JPEGCoder.dctScale(width: 1600, height: 1200, options: options) == 4)
        options.fillSize = PixelSize(width: 1100, height: 0)
        #expect(JPEGCoder.dctScale(width: 1600, height: 1200, options: options) == 8)
        options.fillSize = PixelSize(width: 300, height: 100)
        let image = try Image(data: Self.photo, options: options)
        #expect(image.width == 300 && image.height == 225)
        let reference = try Image(data: Self.photo).bitmap.areaDownscaled(toWidth: 300, height: 225)
        #expect(Fixtures.meanDifference(image.bitmap, reference) < 2)
        // WebP's scaler and PNG's finishing honour it too.
        let webp = try Image(data: try Corpus.data("webp/1.webp"), options: ImageDecodingOptions(fillSize: PixelSize(width: 0, height: 50)))
        #expect(webp.height == 50)
        let png = try Image(data: try Corpus.data("png/basn6a08.png"), options: ImageDecodingOptions(fillSize: PixelSize(width: 8, height: 4)))
        #expect(png.width == 8 && png.height == 8)
    }
}

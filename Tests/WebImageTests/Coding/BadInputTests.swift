import Foundation
import Testing
@testable import WebImage

/// Broken, hostile and unsupported input: always a typed `ImageError`, never a crash.
@Suite struct BadInputTests {
    static let samples = ["png/basn6a08.png", "png/basi2c08.png", "apng/blend_op_over.png", "jpeg/hopper_orientation_6.jpg",
                          "gif/chi.gif", "webp/1.webp", "webp/TestImageAnimated.webp", "gif/hopper.gif"]

    @Test(arguments: samples)
    func truncatedFilesFailWithImageError(path: String) throws {
        let data = try Corpus.data(path)
        // Cuts inside the image data (a PNG missing only its IEND still shows: see below).
        for fraction in [0.02, 0.1, 0.3, 0.5, 0.8] {
            let cut = data.prefix(max(1, Int(Double(data.count) * fraction)))
            #expect(throws: ImageError.self, "\(path) cut at \(fraction)") { _ = try Image(data: Data(cut)).allFrames() }
        }
    }

    @Test func pngWithAllRowsButNoIENDDecodesAsBrowsersShowIt() throws {
        let data = try Corpus.data("png/basn6a08.png")
        let full = try Image(data: data)
        #expect(try Image(data: data.dropLast(12)).bitmap == full.bitmap)
        #expect(try Image(data: data.dropLast(5)).bitmap == full.bitmap)
    }

    @Test(arguments: samples)
    func corruptHeadersFailWithImageError(path: String) throws {
        let data = try Corpus.data(path)
        for offset in stride(from: 12, to: min(40, data.count), by: 3) {
            var broken = data
            broken[offset] ^= 0xA5
            // Either an error or some image; never a crash or a hang.
            do { _ = try Image(data: broken).allFrames() } catch { #expect(error is ImageError) }
        }
    }

    @Test func emptyDataIsEmptyData() {
        #expect(throws: ImageError.emptyData) { _ = try Image(data: Data()) }
    }

    @Test func unknownAndRecognisedButUnsupportedFormats() {
        #expect(throws: ImageError.unsupportedFormat(.unknown)) { _ = try Image(data: Data("hello, world".utf8)) }
        // A TIFF needs the WebImageTIFF plug-in; a BMP header of no known size is corrupt, not unknown.
        let tiff = Data([0x49, 0x49, 0x2A, 0x00] + [UInt8](repeating: 0, count: 60))
        #expect(throws: ImageError.unsupportedFormat(.tiff)) { _ = try Image(data: tiff) }
        var bmp = Data("BM".utf8)
        bmp.append(Data(repeating: 0, count: 60))
        #expect { _ = try Image(data: bmp) } throws: { error in
            if case ImageError.undecodable(.bmp, _) = error { return true }
            return false
        }
        let avif = Data([0, 0, 0, 0x1C] + Array("ftypavif".utf8) + [UInt8](repeating: 0, count: 20))
        #expect(throws: ImageError.unsupportedFormat(.avif)) { _ = try Image(data: avif) }
    }

    @Test func dimensionsOverTheLimitFailBeforeAllocating() throws {
        // 40000 x 40000 RGBA would be 6.4 GB: the header alone must stop it.
        let header = Fixtures.pngHeader(width: 40_000, height: 40_000)
        #expect(throws: ImageError.tooLarge(width: 40_000, height: 40_000, limit: 100_000_000)) { _ = try Image(data: header) }
        let small = try Corpus.data("png/basn6a08.png")  // 32 x 32
        #expect(throws: ImageError.tooLarge(width: 32, height: 32, limit: 1000)) {
            _ = try Image(data: small, options: ImageDecodingOptions(pixelLimit: 1000))
        }
        // A 1x1 GIF screen whose frame claims 65535 x 65535, and a 65535 x 65535 JPEG.
        let gifBomb = Data([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0, 0, 0,
                            0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0x02, 0x02, 0x4C, 0x01, 0x00, 0x3B])
        for (path, data) in [("jpeg/max_size.jpg", try Corpus.data("jpeg/max_size.jpg")), ("GIF frame bomb", gifBomb)] {
            do {
                _ = try Image(data: data)
                Issue.record("\(path) decoded")
            } catch {
                guard case ImageError.tooLarge = error else { Issue.record("\(path): \(error)"); continue }
            }
        }
        let jpeg = try Corpus.data("jpeg/hopper_orientation_6.jpg")
        #expect(throws: ImageError.self) { _ = try Image(data: jpeg, options: ImageDecodingOptions(pixelLimit: 100)) }
        let webp = try Corpus.data("webp/1.webp")
        #expect(throws: ImageError.tooLarge(width: 550, height: 368, limit: 100)) {
            _ = try Image(data: webp, options: ImageDecodingOptions(pixelLimit: 100))
        }
    }

    @Test func zeroDimensionsAreUndecodable() throws {
        #expect(throws: ImageError.self) { _ = try Image(data: Fixtures.pngHeader(width: 0, height: 10)) }
        #expect(throws: ImageError.self) { _ = try Image(data: try Corpus.data("gif/zero_width.gif")) }
        #expect(throws: ImageError.self) { _ = try Image(data: try Corpus.data("jpeg/invalid-dimensions.jpg")) }
    }

    @Test func gifOutOfRangePaletteIndexDrawsOpaqueBlack() throws {
        let image = try Image(data: Fixtures.gifWithOutOfRangeIndex)
        #expect(image.width == 1 && image.height == 1)
        #expect(image.bitmap[0, 0] == (0, 0, 0, 255))
    }

    @Test func gifFramesOutsideTheCanvasAreClipped() throws {
        let image = try Image(data: try Corpus.data("gif/oob.gif"))  // screen 32x32, frame 16x16 at 24,24
        #expect(image.width == 32 && image.height == 32)
        #expect(image.bitmap[31, 31].a == 255)
        #expect(image.bitmap[0, 0].a == 0)
    }

    @Test func apngWithBadSequenceNumbersPlaysTheValidFrames() throws {
        for path in ["apng/sequence_gap.png", "apng/sequence_reorder.png", "apng/sequence_repeat.png"] {
            let image = try Image(data: try Corpus.data(path))
            #expect(image.frameCount >= 1 && image.frameCount < 3, "\(path)")
            _ = try image.allFrames()
        }
    }

    @Test func webpWithALyingRIFFSize() throws {
        let original = try Corpus.data("webp/1.webp")
        for size in [UInt32(original.count * 4), 100, 0, UInt32.max] {
            var data = original
            data.replaceSubrange(4..<8, with: withUnsafeBytes(of: size.littleEndian) { Array($0) })
            do { _ = try Image(data: data) } catch { #expect(error is ImageError, "RIFF size \(size)") }
        }
        var tooLong = original
        tooLong.replaceSubrange(4..<8, with: withUnsafeBytes(of: UInt32(original.count * 4).littleEndian) { Array($0) })
        #expect(throws: ImageError.self) { _ = try Image(data: tooLong) }
    }

    @Test func everyErrorReadsAsOneSentence() {
        let errors: [ImageError] = [.emptyData, .unsupportedFormat(.heic), .undecodable(.png, reason: "bad CRC"),
                                    .tooLarge(width: 1, height: 2, limit: 3), .encodingFailed(.gif, reason: "x"),
                                    .frameOutOfRange(index: 4, count: 2), .unreadableFile(path: "/x", reason: "gone")]
        for error in errors { #expect(error.description.hasSuffix(".")) }
    }

    @Test func missingFileIsUnreadable() {
        #expect(performing: { _ = try Image(contentsOf: URL(fileURLWithPath: "/nonexistent/image.png")) }, throws: { error in
            if case ImageError.unreadableFile = error { return true }
            return false
        })
    }
}

import Foundation
import Testing
@testable import WebImage

@Suite struct EncodingTests {
    let still = Image(bitmap: Fixtures.gradient(width: 64, height: 48))
    let opaque = Image(bitmap: Fixtures.gradient(width: 64, height: 48, opaque: true))

    @Test func pngRoundTripsExactly() throws {
        let decoded = try Image(data: try still.encoded(as: .png))
        #expect(decoded.format == .png)
        #expect(decoded.bitmap == still.bitmap)
        #expect(try Image(data: try opaque.encoded(as: .png)).bitmap == opaque.bitmap)
    }

    @Test func fastPNGIsUnfilteredAndStillExact() throws {
        let photo = Image(bitmap: TransformerTests.large)
        let fast = try ImageCoders.shared.encode(photo, as: .png, options: ImageEncodingOptions(effort: 0.1))
        let small = try ImageCoders.shared.encode(photo, as: .png, options: ImageEncodingOptions())
        #expect(try Image(data: fast).bitmap == photo.bitmap && (try Image(data: small)).bitmap == photo.bitmap)
        #expect(fast.count > small.count, "unfiltered rows compress less: \(fast.count) against \(small.count)")
    }

    /// The unfiltered rows are compressed by libdeflate and written between libpng's chunks: an
    /// RGBA and an RGB file round-trip exactly, Pillow (zlib and its own chunk reader, CRCs
    /// checked) reads the same pixels, and the colour profile is kept.
    @Test func fastPNGIsReadByAnotherDecoderAndKeepsItsProfile() throws {
        let fastOptions = ImageEncodingOptions(effort: 0.1)
        let dir = TemporaryDirectory("fast-png")
        defer { dir.remove() }
        for (name, image) in [("rgba", still), ("rgb", opaque)] {
            let fast = try ImageCoders.shared.encode(image, as: .png, options: fastOptions)
            #expect(fast[25] == (name == "rgba" ? 6 : 2), "\(name): IHDR colour type")
            #expect(try Image(data: fast).bitmap == image.bitmap, "\(name)")
            let file = dir.url.appendingPathComponent("\(name).png"), dump = dir.url.appendingPathComponent("\(name).rgba")
            try fast.write(to: file)
            try Pillow.run("""
                import sys; from PIL import Image
                im = Image.open(sys.argv[1]); im.load()
                open(sys.argv[2], "wb").write(im.convert("RGBA").tobytes())
                """, arguments: [file.path, dump.path])
            #expect(try Data(contentsOf: dump) == Data(image.bitmap.rgba), "\(name): Pillow's pixels")
        }
        let tagged = try ImageCoders.shared.decode(ModernCorpus.data("icc/jpeg_displayp3.jpg"), options: ImageDecodingOptions(colorSpace: .original))
        let kept = try ImageCoders.shared.decode(ImageCoders.shared.encode(tagged, as: .png, options: fastOptions),
                                                 options: ImageDecodingOptions(colorSpace: .original))
        #expect(kept.colorInfo.iccProfile == tagged.colorInfo.iccProfile && kept.bitmap == tagged.bitmap)
    }

    @Test func losslessWebPRoundTripsExactly() throws {
        let data = try ImageCoders.shared.encode(still, as: .webp, options: ImageEncodingOptions(lossless: true))
        #expect(try Image(data: data).bitmap == still.bitmap)
    }

    @Test func lossyFormatsRoundTripCloselyAndQualityMatters() throws {
        for format in [ImageFormat.jpeg, .webp] {
            let high = try opaque.encoded(as: format, quality: 0.95)
            let low = try opaque.encoded(as: format, quality: 0.2)
            #expect(low.count < high.count, "\(format)")
            let decoded = try Image(data: high)
            #expect(decoded.format == format)
            #expect(Fixtures.meanDifference(decoded.bitmap, opaque.bitmap) < 3, "\(format)")
        }
        let progressive = try ImageCoders.shared.encode(opaque, as: .jpeg, options: ImageEncodingOptions(progressive: true))
        #expect(Fixtures.meanDifference(try Image(data: progressive).bitmap, opaque.bitmap) < 3)
    }

    @Test func gifRoundTripKeepsFramesDurationsLoopAndTransparency() throws {
        let frames = (0..<4).map { i in
            var bitmap = Fixtures.gradient(width: 20, height: 10, opaque: true)
            bitmap.withUnsafeMutableBytes { $0[i * 4 + 3] = 0 }  // one transparent pixel per frame
            return ImageFrame(bitmap: bitmap, duration: 0.05 * Double(i + 1))
        }
        let animation = Image(frames: frames, loopCount: 3)
        let decoded = try Image(data: try animation.encoded(as: .gif))
        #expect(decoded.frameCount == 4)
        #expect(decoded.loopCount == 3)
        #expect(decoded.frameDurations == [0.05, 0.1, 0.15, 0.2])
        #expect(try decoded.frame(at: 2).bitmap[2, 0].a == 0)
        #expect(Fixtures.meanDifference(decoded.bitmap, frames[0].bitmap) < 12)  // 256-colour quantisation
    }

    @Test func animatedWebPRoundTrips() throws {
        let frames = (0..<3).map { i in
            var bitmap = Fixtures.gradient(width: 16, height: 16)
            bitmap.withUnsafeMutableBytes { for p in 0..<(16 * (i + 1)) { $0[p * 4] = 255 } }  // frames differ
            return ImageFrame(bitmap: bitmap, duration: 0.1 * Double(i + 1))
        }
        let data = try ImageCoders.shared.encode(Image(frames: frames, loopCount: 0), as: .webp, options: ImageEncodingOptions(lossless: true))
        let decoded = try Image(data: data)
        #expect(decoded.frameCount == 3)
        #expect(decoded.loopCount == 0)
        #expect(decoded.frameDurations.map { ($0 * 1000).rounded() } == [100, 200, 300])
        #expect(try decoded.frame(at: 2).bitmap == frames[2].bitmap)
    }

    @Test func defaultEncodingUsesTheSourceFormat() throws {
        let gif = try Image(data: try Corpus.data("gif/chi.gif"))
        #expect(ImageFormat(sniffing: try gif.encoded()) == .gif)
        #expect(ImageFormat(sniffing: try still.encoded()) == .png)
    }
}

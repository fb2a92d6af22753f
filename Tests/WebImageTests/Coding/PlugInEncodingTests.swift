import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageJXL

/// The AVIF, HEIC and JPEG XL encoders: what they write reads back through our decoders and
/// through Pillow's plug-ins (pillow-avif-plugin, pillow-heif, pillow-jxl-plugin), exactly for
/// lossless output and within a tolerance for lossy output; animations keep frames and durations.
@Suite struct PlugInEncodingTests {
    struct Case {
        let name: String
        let image: Image
        let format: ImageFormat
        let options: ImageEncodingOptions
        /// Exact pixels expected (lossless), else the mean |diff| allowed against the source.
        let lossless: Bool
        /// Whether Pillow's plug-in reads the frames (pillow-jxl-plugin shows a JXL animation's first frame only).
        let pillowFrames: Bool
    }

    static func cases() throws -> [Case] {
        let alpha = Image(bitmap: Fixtures.gradient(width: 67, height: 45))
        let opaque = Image(bitmap: Fixtures.gradient(width: 64, height: 48, opaque: true))
        let animation = try Image(data: Corpus.data("gif/animated_loop_variable_delay.gif"), options: .init(preloadAllFrames: true))
        return [
            Case(name: "lossless.avif", image: alpha, format: .avif, options: .init(lossless: true), lossless: true, pillowFrames: true),
            Case(name: "lossy.avif", image: opaque, format: .avif, options: .init(quality: 0.8), lossless: false, pillowFrames: true),
            Case(name: "alpha.avif", image: alpha, format: .avif, options: .init(quality: 0.8, effort: 0.2), lossless: false, pillowFrames: true),
            Case(name: "sequence.avif", image: animation, format: .avif, options: .init(lossless: true), lossless: true, pillowFrames: true),
            Case(name: "lossy.heic", image: opaque, format: .heic, options: .init(quality: 0.9), lossless: false, pillowFrames: true),
            Case(name: "alpha.heic", image: alpha, format: .heic, options: .init(quality: 0.9, effort: 0), lossless: false, pillowFrames: true),
            Case(name: "lossless.jxl", image: alpha, format: .jxl, options: .init(lossless: true), lossless: true, pillowFrames: true),
            Case(name: "lossy.jxl", image: opaque, format: .jxl, options: .init(quality: 0.9, effort: 0.4), lossless: false, pillowFrames: true),
            Case(name: "animation.jxl", image: animation, format: .jxl, options: .init(lossless: true), lossless: true, pillowFrames: false),
        ]
    }

    @Test func encodedFilesReadBackThroughOurDecodersAndPillowsPlugIns() throws {
        let dir = TemporaryDirectory("plug-in-encoding"); defer { dir.remove() }
        var decoded: [String: Image] = [:]
        let cases = try Self.cases()
        for test in cases {
            let data = try ModernCorpus.coders.encode(test.image, as: test.format, options: test.options)
            #expect(ImageFormat(sniffing: data) == test.format, "\(test.name)")
            try data.write(to: dir.url.appendingPathComponent(test.name))
            let back = try ModernCorpus.coders.decode(data, options: .init(preloadAllFrames: true))
            decoded[test.name] = back
            #expect(back.frameCount == test.image.frameCount, "\(test.name)")
            #expect(back.frameDurations.map { ($0 * 1000).rounded() } == test.image.frameDurations.map { ($0 * 1000).rounded() }, "\(test.name)")
            for index in 0..<test.image.frameCount {
                let source = try test.image.frame(at: index).bitmap, ours = try back.frame(at: index).bitmap
                if test.lossless {
                    #expect(ours == source, "\(test.name) frame \(index)")
                } else {
                    let distance = try #require(PixelDistance(ours, source))
                    #expect(distance.meanAbs < 3, "\(test.name): mean |diff| \(distance.meanAbs)")
                }
            }
        }
        let pillow = try PillowPlugIns.read(folder: dir.url)
        for test in cases {
            let seen = try #require(pillow[test.name], "\(test.name)")
            let ours = try #require(decoded[test.name])
            #expect(seen["size"] as? [Int] == [ours.width, ours.height], "\(test.name)")
            guard test.pillowFrames else { continue }
            #expect(seen["frames"] as? Int == ours.frameCount, "\(test.name)")
            if ours.isAnimated {
                #expect((seen["durations"] as? [Double])?.map { $0.rounded() } == ours.frameDurations.map { ($0 * 1000).rounded() },
                        "\(test.name)")
            }
            if test.lossless {
                #expect(seen["frame0"] as? String == ours.bitmap.sha256, "\(test.name): Pillow sees other pixels")
            } else {
                let frame0 = try Image(data: Data(contentsOf: dir.url.appendingPathComponent(test.name + ".frame0.png"))).bitmap
                let distance = try #require(PixelDistance(frame0, ours.bitmap))
                #expect(distance.meanAbs < 1.5, "\(test.name): Pillow's decode is \(distance.meanAbs) away from ours")
            }
        }
    }

    @Test func qualityMapsToSizeInEveryLossyEncoder() throws {
        let image = Image(bitmap: Fixtures.gradient(width: 96, height: 64, opaque: true))
        for format in [ImageFormat.avif, .heic, .jxl] {
            let low = try ModernCorpus.coders.encode(image, as: format, options: .init(quality: 0.3))
            let high = try ModernCorpus.coders.encode(image, as: format, options: .init(quality: 0.95))
            #expect(low.count < high.count, "\(format): \(low.count) bytes at 0.3, \(high.count) at 0.95")
        }
    }

    @Test func theEncodersSayWhatTheyWrite() {
        #expect(AVIFCoder().canEncode(.avif))
        #expect(!AVIFCoder().canEncode(.heic))
        #expect(HEIFCoder().canEncode(.heic) == HEIFCoder().canEncode(.heif))
        #expect(JXLCoder().canEncode(.jxl))
        #expect(!JXLCoder().canEncode(.png))
    }
}

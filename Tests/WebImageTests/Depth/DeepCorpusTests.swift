import Foundation
import Testing
@testable import WebImage

/// The modern corpus's files of more than 8 bits decoded at the source's depth, against the
/// reference tools' 16-bit PNGs: `avifdec --depth 16`, `djxl --bits_per_sample=16` and
/// `heif-convert` (which writes a 16-bit PNG for an image of more than 8 bits).
@Suite struct DeepCorpusTests {
    /// `tool` run on the corpus file `file`, its 16-bit PNG read back.
    static func reference(_ tool: String, _ arguments: @escaping (String, String) -> [String], file: String) throws -> Bitmap {
        let suffix = URL(fileURLWithPath: file).pathExtension
        return try ReferenceTools.png(tool, input: try ModernCorpus.data(file), suffix: suffix, arguments)
    }

    /// The largest difference between two 16-bit bitmaps' colour values (alpha too when both
    /// have it: the tools write RGB for an opaque image).
    static func largestDifference(_ a: Bitmap, _ b: Bitmap) throws -> Int {
        let x = try #require(a.rgba16), y = try #require(b.rgba16)
        #expect(x.count == y.count)
        return zip(x, y).map { abs(Int($0) - Int($1)) }.max() ?? .max
    }

    @Test(arguments: ["avif/lossless_10bit_444.avif", "avif/lossless_12bit_444.avif", "avif/lossy_10bit_420.avif",
                      "avif/lossy_12bit_422.avif", "avif/lossy_10bit_444_alpha_lossy.avif"])
    func avifAsAvifdecGivesIt(_ file: String) throws {
        let image = try ModernCorpus.coders.decode(try ModernCorpus.data(file), options: .sourceDepth)
        #expect(image.bitmap.pixelFormat == .rgba16, "\(file)")
        let reference = try Self.reference("/usr/bin/avifdec", { ["--depth", "16", "-j", "1", $0, $1] }, file: file)
        // The same library's conversion; avifdec's chroma upsampling is its automatic choice.
        #expect(try Self.largestDifference(image.bitmap, reference) <= 64, "\(file)")
        #expect((PixelDistance(image.bitmap.converted(to: .rgba8), reference.converted(to: .rgba8))?.meanAbs ?? 99) < 0.5, "\(file)")
    }

    /// (lossless_16bit_rgba.jxl is left out: Debian's djxl 0.7 will not write its 8-bit alpha
    /// beside 16-bit colour.)
    @Test(arguments: ["jxl/lossless_16bit_rgb.jxl", "jxl/lossy_d1_16bit.jxl"])
    func jpegXLAsDjxlGivesIt(_ file: String) throws {
        let image = try ModernCorpus.coders.decode(try ModernCorpus.data(file), options: .sourceDepth)
        #expect(image.bitmap.pixelFormat == .rgba16, "\(file)")
        let reference = try Self.reference("/usr/bin/djxl", { [$0, $1, "--bits_per_sample=16", "--quiet"] }, file: file)
        #expect(try Self.largestDifference(image.bitmap, reference) <= 1, "\(file)")
    }

    @Test(arguments: ["heic/10bit_420_q80.heic", "heic/10bit_alpha_q85.heic"])
    func heicAsHeifConvertGivesIt(_ file: String) throws {
        let image = try ModernCorpus.coders.decode(try ModernCorpus.data(file), options: .sourceDepth)
        #expect(image.bitmap.pixelFormat == .rgba16, "\(file)")
        let reference = try Self.reference("/usr/bin/heif-convert", { [$0, $1] }, file: file)
        // heif-convert widens 10 bits by a shift (v << 6); this decoder repeats the top bits
        // below (v << 6 | v >> 4), so each of its values is heif-convert's with its top ten
        // bits repeated: exactly.
        let shifted = try #require(reference.rgba16)
        let repeated = Bitmap(width: reference.width, height: reference.height, rgba16: shifted.map { $0 | $0 >> 10 })
        #expect(image.bitmap == repeated, "\(file)")
        // And within 1 of v * 65535 / 1023.
        let exact = Bitmap(width: reference.width, height: reference.height,
                           rgba16: shifted.map { UInt16((Int($0 >> 6) * 65535 + 511) / 1023) })
        #expect(try Self.largestDifference(image.bitmap, exact) <= 1, "\(file)")
        // Rounded to 8 bits, within 1 of the 8-bit decode (which rounds the 10 bits directly).
        let eight = try ModernCorpus.coders.decode(try ModernCorpus.data(file)).bitmap
        #expect((PixelDistance(image.bitmap.converted(to: .rgba8), eight)?.maxAbs ?? 99) <= 1, "\(file)")
    }
}

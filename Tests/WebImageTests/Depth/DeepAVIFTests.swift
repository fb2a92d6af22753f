import Foundation
import Testing
@testable import WebImage
import WebImageAVIF

/// AVIF at depth: a deep bitmap is written in 10 bits, and a 10-bit AVIF decoded at the
/// source's depth gives what `avifdec --depth 16` (libavif-bin) writes.
@Suite struct DeepAVIFTests {
    static let coders = ImageCoders([AVIFCoder()] + ImageCoders.builtIn)

    /// A 96x64 gradient in 16 bits, finer than 8 bits can hold.
    static let gradient: Bitmap = {
        var values: [UInt16] = []
        for y in 0..<64 {
            for x in 0..<96 {
                values += [UInt16(x * 680), UInt16(y * 1020), UInt16((x * y * 7) % 65536), 65535]
            }
        }
        return Bitmap(width: 96, height: 64, rgba16: values)
    }()

    /// `avifdec --depth 16` of `avif`, read back through the 16-bit PNG decoder.
    static func avifdec(_ avif: Data) throws -> Bitmap {
        try ReferenceTools.png("/usr/bin/avifdec", input: avif, suffix: "avif") { ["--depth", "16", "-j", "1", $0, $1] }
    }

    @Test(arguments: [true, false]) func aDeepBitmapRoundTripsIn10Bits(_ lossless: Bool) throws {
        let encoded = try Self.coders.encode(Image(bitmap: Self.gradient), as: .avif, options: .init(quality: 0.9, lossless: lossless))
        let image = try Self.coders.decode(encoded, options: .sourceDepth)
        #expect(image.bitmap.pixelFormat == .rgba16)
        // More than 8 bits came back: not every value is an 8-bit one widened.
        #expect(try #require(image.bitmap.rgba16).contains { $0 % 257 != 0 })
        // As libavif's own tool decodes it, value for value.
        let reference = try Self.avifdec(encoded)
        #expect(image.bitmap == reference)
        if lossless {
            // 10 bits kept: every value within half a 10-bit step of the original.
            let ours = try #require(image.bitmap.rgba16), original = try #require(Self.gradient.rgba16)
            let worst = zip(ours, original).map { abs(Int($0) - Int($1)) }.max() ?? .max
            #expect(worst <= 65535 / 1023 / 2 + 1, "largest difference \(worst)")
        }
        // Decoded in 8 bits by default.
        #expect(try Self.coders.decode(encoded).bitmap.pixelFormat == .rgba8)
    }

    @Test func anEightBitAVIFStaysEightBit() throws {
        let encoded = try Self.coders.encode(Image(bitmap: Self.gradient.converted(to: .rgba8)), as: .avif)
        #expect(try Self.coders.decode(encoded, options: .sourceDepth).bitmap.pixelFormat == .rgba8)
    }
}

import Foundation
import Testing
@testable import WebImage
import WebImageJXL

/// JPEG XL at depth: a deep bitmap is written with 16 bits a sample, and decoded at the
/// source's depth it gives what `djxl --bits_per_sample=16` (libjxl-tools) writes.
@Suite struct DeepJXLTests {
    static let coders = ImageCoders([JXLCoder()] + ImageCoders.builtIn)

    /// `djxl` of `jxl` to a 16-bit PNG, read back through the 16-bit PNG decoder.
    static func djxl(_ jxl: Data) throws -> Bitmap {
        try ReferenceTools.png("/usr/bin/djxl", input: jxl, suffix: "jxl") { [$0, $1, "--bits_per_sample=16", "--quiet"] }
    }

    @Test func aLosslessDeepImageRoundTripsExactly() throws {
        let encoded = try Self.coders.encode(Image(bitmap: DeepAVIFTests.gradient), as: .jxl, options: .init(lossless: true))
        let image = try Self.coders.decode(encoded, options: .sourceDepth)
        #expect(image.bitmap == DeepAVIFTests.gradient)
        #expect(image.bitmap == (try Self.djxl(encoded)))
        #expect(try Self.coders.decode(encoded).bitmap == DeepAVIFTests.gradient.converted(to: .rgba8))
    }

    @Test func aLossyDeepImageDecodesAsDjxlDecodesIt() throws {
        let encoded = try Self.coders.encode(Image(bitmap: DeepAVIFTests.gradient), as: .jxl, options: .init(quality: 0.9))
        let image = try Self.coders.decode(encoded, options: .sourceDepth)
        #expect(image.bitmap.pixelFormat == .rgba16)
        let ours = try #require(image.bitmap.rgba16), theirs = try #require((try Self.djxl(encoded)).rgba16)
        let worst = zip(ours, theirs).map { abs(Int($0) - Int($1)) }.max() ?? .max
        // The same decoder; at most the last bit of rounding apart.
        #expect(worst <= 1, "largest difference \(worst)")
        #expect(ours.contains { $0 % 257 != 0 })
    }

    @Test func anEightBitJXLStaysEightBit() throws {
        let encoded = try Self.coders.encode(Image(bitmap: DeepAVIFTests.gradient.converted(to: .rgba8)), as: .jxl)
        #expect(try Self.coders.decode(encoded, options: .sourceDepth).bitmap.pixelFormat == .rgba8)
    }
}

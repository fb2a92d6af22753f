import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageHEIF

/// `ImageEncodingOptions.bitsPerSample`: AVIF and HEIC code a 16-bit image in 10 bits by
/// default, in 12 when asked (a 12-bit source's precision kept), in 8 when asked, and refuse
/// other values.
@Suite struct CodedDepthTests {
    static let coders = ImageCoders([AVIFCoder(), HEIFCoder()] + ImageCoders.builtIn)

    /// The bit depth the file says its samples are coded in: AVIF's `pixi` box, HEVC's `hvcC`
    /// (bitDepthLumaMinus8).
    static func codedDepth(_ data: Data, _ format: ImageFormat) throws -> Int {
        let bytes = [UInt8](data)
        let box = Array((format == .avif ? "pixi" : "hvcC").utf8)
        let start = try #require((0...(bytes.count - box.count)).first { Array(bytes[$0..<$0 + box.count]) == box })
        // pixi: version and flags (4), channel count (1), then the first channel's depth.
        // hvcC: 17 bytes in, bitDepthLumaMinus8 in the low three bits.
        return format == .avif ? Int(bytes[start + 4 + 5]) : Int(bytes[start + 4 + 17] & 7) + 8
    }

    /// How many of `values` are not a `bits`-bit code scaled to 16 bits (`round(v * 65535 /
    /// (2^bits - 1))`), give or take one.
    static func offGrid(_ values: [UInt16], bits: Int) -> Int {
        let top = Double((1 << bits) - 1)
        return values.count { value in
            let code = (Double(value) * top / 65535).rounded()
            return abs((code * 65535 / top).rounded() - Double(value)) > 1
        }
    }

    @Test(arguments: [ImageFormat.avif, .heic], [10, 12])
    func aDeepImageIsCodedInTheBitsAsked(_ format: ImageFormat, _ bits: Int) throws {
        let options = ImageEncodingOptions(quality: 0.95, bitsPerSample: bits == 10 ? nil : bits)
        let encoded = try Self.coders.encode(Image(bitmap: DeepAVIFTests.gradient), as: format, options: options)
        #expect(try Self.codedDepth(encoded, format) == bits)
        let decoded = try Self.coders.decode(encoded, options: .sourceDepth).bitmap
        if format == .avif {
            // As libavif's own tool decodes it, value for value (libavif converts YUV to RGB in
            // floating point, so its values lie on no grid).
            #expect(decoded == (try DeepAVIFTests.avifdec(encoded)))
        } else {
            // libheif's RGB holds the coded bits, which the decoder scales to 16: twelve bits
            // hold values ten cannot.
            let values = try #require(decoded.rgba16)
            #expect(Self.offGrid(values, bits: bits) == 0)
            #expect((Self.offGrid(values, bits: 10) == 0) == (bits == 10))
            // And they are the image's values, give or take the lossy coding.
            let original = try #require(DeepAVIFTests.gradient.rgba16)
            let mean = zip(values, original).map { abs(Double($0) - Double($1)) }.reduce(0, +) / Double(values.count)
            #expect(mean < 400, "mean difference \(mean)")
        }
    }

    @Test func twelveBitLosslessAVIFKeepsTwelveBits() throws {
        let encoded = try Self.coders.encode(Image(bitmap: DeepAVIFTests.gradient), as: .avif,
                                             options: .init(lossless: true, bitsPerSample: 12))
        let image = try Self.coders.decode(encoded, options: .sourceDepth)
        // As libavif's own tool decodes it, value for value.
        #expect(image.bitmap == (try DeepAVIFTests.avifdec(encoded)))
        // Every value within half a 12-bit step of the original (10 bits would be 32 off).
        let ours = try #require(image.bitmap.rgba16), original = try #require(DeepAVIFTests.gradient.rgba16)
        let worst = zip(ours, original).map { abs(Int($0) - Int($1)) }.max() ?? .max
        #expect(worst <= 65535 / 4095 / 2 + 1, "largest difference \(worst)")
    }

    @Test(arguments: [ImageFormat.avif, .heic])
    func eightBitsAskedCodeADeepImageInEight(_ format: ImageFormat) throws {
        let encoded = try Self.coders.encode(Image(bitmap: DeepAVIFTests.gradient), as: format, options: .init(bitsPerSample: 8))
        #expect(try Self.codedDepth(encoded, format) == 8)
        #expect(try Self.coders.decode(encoded, options: .sourceDepth).bitmap.pixelFormat == .rgba8)
    }

    @Test(arguments: [ImageFormat.avif, .heic])
    func anEightBitImageStaysEightBitsWhateverIsAsked(_ format: ImageFormat) throws {
        let image = Image(bitmap: DeepAVIFTests.gradient.converted(to: .rgba8))
        let encoded = try Self.coders.encode(image, as: format, options: .init(bitsPerSample: 12))
        #expect(try Self.codedDepth(encoded, format) == 8)
    }

    @Test(arguments: [ImageFormat.avif, .heic], [0, 9, 11, 16])
    func otherDepthsAreRefused(_ format: ImageFormat, _ bits: Int) throws {
        let error = #expect(throws: ImageError.self) {
            try Self.coders.encode(Image(bitmap: DeepAVIFTests.gradient), as: format, options: .init(bitsPerSample: bits))
        }
        guard case .encodingFailed(_, let reason)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(reason.contains("\(bits)"))
    }
}

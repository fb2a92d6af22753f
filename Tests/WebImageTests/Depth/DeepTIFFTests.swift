import CWebImageCodecs
import Foundation
import Testing
@testable import WebImage
import WebImageTIFF

/// TIFF at depth: Pillow's 16-bit grey TIFFs decode to Pillow's own I;16 values, 16-bit RGB and
/// RGBA in every layout (strips, tiles, planes) to values that round to the 8-bit decode, and
/// the encoder writes 8- and 16-bit TIFFs that decode back exactly.
@Suite struct DeepTIFFTests {
    static let coders = ImageCoders([TIFFCoder()] + ImageCoders.builtIn)

    /// Pillow's 16-bit grey files (strips, several compressions, both byte orders).
    static let greyFiles = ["12in16bit.tif", "16_bit_noise.tif", "16bit.MM.cropped.tif", "16bit.MM.deflate.tif",
                            "16bit.cropped.tif", "16bit.deflate.tif", "16bit.r.tif"]

    /// Pillow's values of a 16-bit grey file, as numpy reads them.
    static func pillowValues(_ file: URL) throws -> [UInt16] {
        let dir = TemporaryDirectory("tiff-i16")
        defer { dir.remove() }
        let output = dir.url.appendingPathComponent("values.raw")
        let script = """
        import numpy as np
        from PIL import Image
        np.asarray(Image.open(\(String(reflecting: file.path)))).astype('<u2').tofile(\(String(reflecting: output.path)))
        """
        try Pillow.run(script)
        return try Data(contentsOf: output).withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
    }

    @Test(arguments: greyFiles) func sixteenBitGreyIsPillowsValues(_ name: String) throws {
        let file = PillowSuite.directory.appendingPathComponent(name)
        let image = try Self.coders.decode(try Data(contentsOf: file), options: .sourceDepth)
        #expect(image.bitmap.pixelFormat == .rgba16)
        let ours = try #require(image.bitmap.rgba16)
        let grey = stride(from: 0, to: ours.count, by: 4).map { ours[$0] }
        #expect(grey == (try Self.pillowValues(file)), "\(name)")
        let greyAndOpaque = stride(from: 0, to: ours.count, by: 4).allSatisfy { (i: Int) -> Bool in
            ours[i] == ours[i + 1] && ours[i] == ours[i + 2] && ours[i + 3] == 65535
        }
        #expect(greyAndOpaque)
        // 8 bits by default, as before.
        #expect(try Self.coders.decode(try Data(contentsOf: file)).bitmap.pixelFormat == .rgba8)
    }

    /// Pillow's 16-bit RGB and RGBA files in every layout: strips and tiles, contiguous and in planes.
    static let colourFiles = ["tiff_16bit_RGBa.tiff", "tiff_16bit_RGB.tiff", "tiff_strip_planar_16bit_RGB.tiff",
                              "tiff_strip_planar_16bit_RGBa.tiff", "tiff_tiled_planar_16bit_RGB.tiff", "tiff_tiled_planar_16bit_RGBa.tiff"]

    @Test(arguments: colourFiles) func sixteenBitColourKeepsItsDepthInEveryLayout(_ name: String) throws {
        let file = PillowSuite.directory.appendingPathComponent(name)
        let data = try Data(contentsOf: file)
        let deep = try Self.coders.decode(data, options: .sourceDepth)
        #expect(deep.bitmap.pixelFormat == .rgba16)
        #expect(try #require(deep.bitmap.rgba16).contains { $0 % 257 != 0 })
        // Rounded to 8 bits, what the 8-bit interface gives: it goes through 8-bit premultiplied
        // colours, so compare colours weighted by their alpha (premultiplied), within 2.
        let eight = try Self.coders.decode(data).bitmap.rgba, ours = deep.bitmap.converted(to: .rgba8).rgba
        var worst = 0
        for i in stride(from: 0, to: ours.count, by: 4) {
            #expect(abs(Int(ours[i + 3]) - Int(eight[i + 3])) <= 1)
            for c in 0..<3 {
                let weighted = abs(Int(ours[i + c]) - Int(eight[i + c])) * Int(ours[i + 3]) / 255
                worst = max(worst, weighted)
            }
        }
        #expect(worst <= 2, "\(name): largest alpha-weighted difference \(worst)")
    }

    @Test(arguments: colourFiles) func aCutSixteenBitFileIsATypedError(_ name: String) throws {
        let data = try Data(contentsOf: PillowSuite.directory.appendingPathComponent(name))
        for fraction in [0.3, 0.6, 0.9] {
            let cut = data.prefix(Int(Double(data.count) * fraction))
            #expect(throws: ImageError.self, "\(name) cut at \(fraction)") { try Self.coders.decode(cut, options: .sourceDepth) }
        }
    }

    @Test(arguments: [true, false]) func theEncoderRoundTripsSixteenAndEightBits(_ alpha: Bool) throws {
        var values: [UInt16] = []
        for y in 0..<40 {
            for x in 0..<60 {
                let a: UInt16 = alpha ? UInt16((x + y) * 650) : 65535
                values += [UInt16(x * 1092), UInt16(y * 1680), UInt16((x * y * 31) % 65536), a]
            }
        }
        let deep = Bitmap(width: 60, height: 40, rgba16: values)
        let tiff = try Self.coders.encode(Image(bitmap: deep), as: .tiff)
        #expect(ImageFormat(sniffing: tiff) == .tiff)
        #expect(try Self.coders.decode(tiff, options: .sourceDepth).bitmap == deep)
        let eight = deep.converted(to: .rgba8)
        let tiff8 = try Self.coders.encode(Image(bitmap: eight), as: .tiff)
        #expect(try Self.coders.decode(tiff8).bitmap == eight)
        // Pillow reads the 8-bit file as written.
        let dir = TemporaryDirectory("tiff-encode")
        defer { dir.remove() }
        let path = dir.url.appendingPathComponent("out.tif")
        try tiff8.write(to: path)
        let pillow = try PillowSuite.read([path], renders: dir.url)
        #expect(pillow[path.path]??.sha256 == eight.sha256)
    }

    @Test func anEncodedTIFFKeepsItsProfile() throws {
        var image = Image(bitmap: Bitmap(width: 8, height: 8, rgba: Array(repeating: 128, count: 256)))
        var srgb = wi_buffer()
        try #require(wi_color_srgb_profile(&srgb) == WI_OK)
        image.colorInfo = ImageColorInfo(iccProfile: CodecBridge.takeData(&srgb))
        let tiff = try Self.coders.encode(image, as: .tiff)
        var original = ImageDecodingOptions()
        original.colorSpace = .original
        #expect(try Self.coders.decode(tiff, options: original).colorInfo.iccProfile == image.colorInfo.iccProfile)
    }
}

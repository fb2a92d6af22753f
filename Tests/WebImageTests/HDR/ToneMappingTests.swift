import Foundation
import Testing
@testable import WebImage
import WebImageAVIF

/// HDR (PQ and HLG) images: tone-mapped to SDR sRGB by default, against a numpy BT.2390
/// reference (ToneMapReference), or kept as HDR with their code points when asked.
@Suite struct ToneMappingTests {
    static let coders = ImageCoders([AVIFCoder()] + ImageCoders.builtIn)

    /// A 128x96 field of HDR signal values: every level from black to full signal along x,
    /// hues along y, a grey band, and alpha varying in the last rows.
    static let signal: Bitmap = {
        var values: [UInt16] = []
        for y in 0..<96 {
            for x in 0..<128 {
                let level = Double(x) / 127
                let (r, g, b): (Double, Double, Double)
                switch y / 16 {
                case 0: (r, g, b) = (level, level, level)
                case 1: (r, g, b) = (level, level * 0.3, level * 0.1)
                case 2: (r, g, b) = (level * 0.2, level, level * 0.5)
                case 3: (r, g, b) = (level * 0.4, level * 0.6, level)
                case 4: (r, g, b) = (level, level * 0.9, level * 0.8)
                default: (r, g, b) = (level * 0.7, level, level)
                }
                let alpha = y >= 88 ? UInt16(x * 516) : 65535
                values += [UInt16(r * 65535), UInt16(g * 65535), UInt16(b * 65535), alpha]
            }
        }
        return Bitmap(width: 128, height: 96, rgba16: values)
    }()

    static var keepHDR: ImageDecodingOptions {
        var options = ImageDecodingOptions()
        options.dynamicRange = .high
        return options
    }

    /// `signal` written as a lossless 10-bit AVIF with `transfer` over BT.2020 primaries.
    static func hdrAVIF(transfer: Int) throws -> Data {
        var image = Image(bitmap: signal)
        image.colorInfo = ImageColorInfo(cicp: .init(colorPrimaries: 9, transferCharacteristics: transfer, matrixCoefficients: 0, fullRange: true))
        return try coders.encode(image, as: .avif, options: .init(lossless: true))
    }

    static func differences(_ a: Bitmap, _ b: Bitmap) -> (worst: Int, mean: Double) {
        let x = a.converted(to: .rgba16).rgba16 ?? [], y = b.converted(to: .rgba16).rgba16 ?? []
        let scale = a.pixelFormat == .rgba8 ? 257 : 1
        let diffs = zip(x, y).map { abs(Int($0) - Int($1)) / scale }
        return (diffs.max() ?? .max, Double(diffs.reduce(0, +)) / Double(max(1, diffs.count)))
    }

    @Test(arguments: [16, 18]) func anHDRImageIsToneMappedAsTheReferenceDoes(transfer: Int) throws {
        let avif = try Self.hdrAVIF(transfer: transfer)
        // Kept: deep, the stored signal, and its code points.
        let kept = try Self.coders.decode(avif, options: Self.keepHDR)
        #expect(kept.bitmap.pixelFormat == .rgba16)
        #expect(kept.colorInfo.cicp?.transferCharacteristics == transfer)
        #expect(kept.colorInfo.cicp?.colorPrimaries == 9)
        // The default: tone-mapped to 8-bit sRGB, no colour description left.
        let mapped = try Self.coders.decode(avif)
        #expect(mapped.bitmap.pixelFormat == .rgba8)
        #expect(mapped.colorInfo.isEmpty)
        let reference = try ToneMapReference.map(kept.bitmap, transfer: transfer, primaries: 9)
        let (worst, mean) = Self.differences(mapped.bitmap, reference)
        #expect(worst <= 1, "largest difference \(worst)")
        #expect(mean <= 0.05, "mean difference \(mean)")
        // At the source's depth the map gives 16 bits, as the reference does.
        let deep = try Self.coders.decode(avif, options: .sourceDepth)
        #expect(deep.bitmap.pixelFormat == .rgba16)
        let deepReference = try ToneMapReference.map(kept.bitmap, transfer: transfer, primaries: 9, deep: true)
        let (deepWorst, _) = Self.differences(deep.bitmap, deepReference)
        #expect(deepWorst <= 96, "largest difference \(deepWorst) of 65535")
    }

    @Test func thePeakBecomesSDRWhiteAndMidTonesStay() throws {
        // PQ grey: 1000 cd/m² (the source peak) becomes SDR white; 100 cd/m² is below the knee
        // and stays, sRGB's encoding of 100/203 (BT.2408's reference white is SDR white's
        // level); 203 cd/m² is above the knee, compressed but brighter than 100.
        let signals: [Double] = [0.58069, 0.50808, 0.75183, 0]
        let codes = signals.map { UInt16(($0 * 65535).rounded()) }
        let values: [UInt16] = codes.flatMap { code -> [UInt16] in [code, code, code, 65535] }
        var image = Image(bitmap: Bitmap(width: 4, height: 1, rgba16: values))
        image.colorInfo = ImageColorInfo(cicp: .init(colorPrimaries: 9, transferCharacteristics: 16, matrixCoefficients: 0, fullRange: true))
        let avif = try Self.coders.encode(image, as: .avif, options: .init(lossless: true))
        let bitmap = try Self.coders.decode(avif).bitmap
        #expect(bitmap[0, 0].r > bitmap[1, 0].r && bitmap[0, 0].r < 255)
        let expected: Double = 255 * (1.055 * pow(100.0 / 203, 1 / 2.4) - 0.055)
        let grey = Double(bitmap[1, 0].r)
        #expect(abs(grey - expected) <= 2, "\(grey) against \(expected)")
        #expect(bitmap[2, 0].r == 255)
        #expect(bitmap[3, 0].r == 0)
    }

    @Test func keptHDRIsWrittenAsHDR() throws {
        let avif = try Self.hdrAVIF(transfer: 16)
        let kept = try Self.coders.decode(avif, options: Self.keepHDR)
        let again = try Self.coders.encode(kept, as: .avif, options: .init(lossless: true))
        let decoded = try Self.coders.decode(again, options: Self.keepHDR)
        #expect(decoded.colorInfo.cicp?.transferCharacteristics == 16)
        #expect(decoded.colorInfo.cicp?.colorPrimaries == 9)
        #expect(decoded.bitmap == kept.bitmap)
        // Decoded by default, the copy is tone-mapped as the original is.
        let (copy, original) = (try Self.coders.decode(again), try Self.coders.decode(avif))
        #expect(copy.bitmap == original.bitmap)
    }

    @Test func originalColourKeepsTheStoredSignal() throws {
        let avif = try Self.hdrAVIF(transfer: 16)
        var options = ImageDecodingOptions(colorSpace: .original)
        options.bitDepth = .source
        let stored = try Self.coders.decode(avif, options: options)
        let kept = try Self.coders.decode(avif, options: Self.keepHDR)
        #expect(stored.bitmap == kept.bitmap)
        #expect(stored.colorInfo.cicp?.transferCharacteristics == 16)
    }

    @Test func avifencsHDRFileIsToneMapped() throws {
        // A PQ AVIF made by libavif's own encoder from a 16-bit PNG, YCbCr-coded (BT.2020 matrix).
        let dir = TemporaryDirectory("hdr-avifenc")
        defer { dir.remove() }
        let png = dir.url.appendingPathComponent("in.png"), avif = dir.url.appendingPathComponent("out.avif")
        try Self.coders.encode(Image(bitmap: Self.signal), as: .png).write(to: png)
        try #require(try HDRFormatsTests.run("/usr/bin/avifenc", ["-j", "1", "-d", "10", "-y", "444", "--min", "0", "--max", "0",
                                                                  "--cicp", "9/16/9", "-r", "full", png.path, avif.path]))
        let data = try Data(contentsOf: avif)
        let kept = try Self.coders.decode(data, options: Self.keepHDR)
        #expect(kept.colorInfo.cicp?.transferCharacteristics == 16)
        // The deep samples are what avifdec gives.
        let avifdec = try ReferenceTools.png("/usr/bin/avifdec", input: data, suffix: "avif") { ["--depth", "16", "-j", "1", $0, $1] }
        #expect(kept.bitmap == avifdec)
        let mapped = try Self.coders.decode(data)
        let (worst, mean) = Self.differences(mapped.bitmap, try ToneMapReference.map(kept.bitmap, transfer: 16, primaries: 9))
        #expect(worst <= 1, "largest difference \(worst)")
        #expect(mean <= 0.05, "mean difference \(mean)")
    }

    @Test func aDownscaledHDRDecodeIsMappedBeforeItIsReduced() throws {
        let avif = try Self.hdrAVIF(transfer: 16)
        var options = ImageDecodingOptions(maxPixelSize: 64)
        options.bitDepth = .eight
        let small = try Self.coders.decode(avif, options: options)
        #expect(small.bitmap.width == 64)
        // The same as mapping first and reducing after, not a reduction of the PQ signal.
        let full = try Self.coders.decode(avif).bitmap.areaDownscaled(toWidth: 64, height: 48)
        #expect(Self.differences(small.bitmap, full).worst <= 1)
    }
}

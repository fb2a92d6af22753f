import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageJXL

/// HDR in every format that signals it: PNG (cICP), JPEG XL (its colour encoding) and HEIC
/// (nclx) decode from their deep samples, tone-mapped as the AVIF path is, or kept; the PNG,
/// JPEG XL and AVIF encoders write the code points again.
@Suite struct HDRFormatsTests {
    static let coders = ImageCoders([AVIFCoder(), HEIFCoder(), JXLCoder()] + ImageCoders.builtIn)

    /// The field of PQ (or HLG) signal values of ToneMappingTests, as an image kept as HDR.
    static func hdrImage(transfer: Int = 16) -> Image {
        var image = Image(bitmap: ToneMappingTests.signal)
        image.colorInfo = ImageColorInfo(cicp: .init(colorPrimaries: 9, transferCharacteristics: transfer, matrixCoefficients: 0, fullRange: true))
        return image
    }

    /// Runs `tool` with `arguments`; whether it succeeded.
    static func run(_ tool: String, _ arguments: [String]) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// `data` decoded as HDR (deep, its code points) and tone-mapped by default, within one
    /// level of the reference's map of the kept samples (two for HLG, whose OOTF table is the
    /// coarser step), mean under 0.05.
    static func checkToneMapped(_ data: Data, transfer: Int = 16) throws {
        let kept = try coders.decode(data, options: ToneMappingTests.keepHDR)
        #expect(kept.bitmap.pixelFormat == .rgba16)
        #expect(kept.colorInfo.hdrCICP?.transferCharacteristics == transfer)
        let mapped = try coders.decode(data)
        #expect(mapped.colorInfo.isEmpty)
        let reference = try ToneMapReference.map(kept.bitmap, transfer: transfer, primaries: 9)
        let (worst, mean) = ToneMappingTests.differences(mapped.bitmap, reference)
        #expect(worst <= (transfer == 18 ? 2 : 1), "largest difference \(worst)")
        #expect(mean <= 0.05, "mean difference \(mean)")
    }

    @Test(arguments: [16, 18]) func aPNGWithCICPIsHDR(transfer: Int) throws {
        let png = try Self.coders.encode(Self.hdrImage(transfer: transfer), as: .png)
        // Written as a 16-bit PNG with a cICP chunk (and no iCCP).
        #expect(png.range(of: Data("cICP".utf8)) != nil)
        #expect(png.range(of: Data("iCCP".utf8)) == nil)
        let kept = try Self.coders.decode(png, options: ToneMappingTests.keepHDR)
        #expect(kept.bitmap == ToneMappingTests.signal)
        try Self.checkToneMapped(png, transfer: transfer)
    }

    @Test func aJPEGXLKeepsItsHDREncoding() throws {
        let jxl = try Self.coders.encode(Self.hdrImage(), as: .jxl, options: .init(lossless: true))
        let kept = try Self.coders.decode(jxl, options: ToneMappingTests.keepHDR)
        #expect(kept.bitmap == ToneMappingTests.signal)
        try Self.checkToneMapped(jxl)
    }

    @Test func cjxlsLossyPQFileIsToneMapped() throws {
        // libjxl's own encoder, lossy (XYB), told the PNG is BT.2100 PQ.
        let dir = TemporaryDirectory("hdr-cjxl")
        defer { dir.remove() }
        let png = dir.url.appendingPathComponent("in.png"), jxl = dir.url.appendingPathComponent("out.jxl")
        try Self.coders.encode(Image(bitmap: ToneMappingTests.signal), as: .png).write(to: png)
        try #require(try Self.run("/usr/bin/cjxl", [png.path, jxl.path, "-d", "1", "-x", "color_space=RGB_D65_202_Rel_PeQ"]))
        try Self.checkToneMapped(try Data(contentsOf: jxl))
    }

    @Test func aHEICKeptAsHDRIsWrittenIn10BitsWithItsCodePoints() throws {
        // (heif-enc 1.15 writes no nclx box whatever it is told, so the file is our encoder's.)
        let heic = try Self.coders.encode(Self.hdrImage(), as: .heic, options: .init(quality: 0.95))
        let kept = try Self.coders.decode(heic, options: ToneMappingTests.keepHDR)
        #expect(kept.colorInfo.hdrCICP?.colorPrimaries == 9)
        // 10 bits came back: within a few 10-bit steps of the signal (lossy coding).
        let ours = try #require(kept.bitmap.rgba16), signal = try #require(ToneMappingTests.signal.rgba16)
        let mean = Double(zip(ours, signal).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(ours.count)
        #expect(mean < 64 * 4, "mean difference \(mean) of 65535")
        #expect(ours.contains { $0 % 257 != 0 })
        try Self.checkToneMapped(heic)
    }

    @Test func anAVIFKeptAsHDRWritesItsCodePointsNotAProfile() throws {
        // A kept JPEG XL carries libjxl's derived profile beside its code points: the AVIF
        // written from it says PQ in its nclx box, so it stays HDR.
        let jxl = try Self.coders.encode(Self.hdrImage(), as: .jxl, options: .init(lossless: true))
        let kept = try Self.coders.decode(jxl, options: ToneMappingTests.keepHDR)
        let avif = try Self.coders.encode(kept, as: .avif, options: .init(lossless: true))
        let again = try Self.coders.decode(avif, options: ToneMappingTests.keepHDR)
        #expect(again.colorInfo.iccProfile == nil)
        #expect(again.colorInfo.hdrCICP?.transferCharacteristics == 16)
    }

    @Test func aGainMapJPEGIsReadAsItsBaseImage() throws {
        // Ultra HDR stores the gain map as a second JPEG after the first's EOI (located by the
        // MPF segment): the SDR base image is what decodes.
        let base = try Self.coders.encode(Image(bitmap: Bitmap(width: 32, height: 16, rgba: Array(repeating: 200, count: 32 * 16 * 4))), as: .jpeg)
        let gainMap = try Self.coders.encode(Image(bitmap: Bitmap(width: 16, height: 8)), as: .jpeg)
        let decoded = try Self.coders.decode(base + gainMap)
        #expect(decoded.width == 32 && decoded.height == 16)
        #expect(decoded.bitmap == (try Self.coders.decode(base)).bitmap)
    }
}

/// `ImageContext.dynamicRange` through the manager: the tone-mapped and the kept image are two
/// images, cached under their own keys from one download.
@Suite struct HDRLoadingTests {
    @Test func keptHDRIsItsOwnImage() async throws {
        let h = try await ManagerHarness()
        let avif = try ToneMappingTests.hdrAVIF(transfer: 16)
        h.server.route("/hdr.avif", .respond(contentType: "image/avif", body: avif))
        var mapped = ImageContext()
        mapped.coder = AVIFCoder()
        var kept = mapped
        kept.dynamicRange = .high
        let sdr = try await h.manager.image(for: h.url("/hdr.avif"), context: mapped)
        let hdr = try await h.manager.image(for: h.url("/hdr.avif"), context: kept)
        #expect(sdr.bitmap.pixelFormat == .rgba8 && sdr.colorInfo.isEmpty)
        #expect(hdr.bitmap.pixelFormat == .rgba16 && hdr.colorInfo.hdrCICP?.transferCharacteristics == 16)
        let downloads = h.server.requestCount("/hdr.avif")
        // Both are memory hits now, each under its own key.
        #expect(try await h.manager.image(for: h.url("/hdr.avif"), context: kept).bitmap.pixelFormat == .rgba16)
        #expect(try await h.manager.image(for: h.url("/hdr.avif"), context: mapped).bitmap.pixelFormat == .rgba8)
        #expect(h.server.requestCount("/hdr.avif") == downloads)
        await h.finish()
    }
}

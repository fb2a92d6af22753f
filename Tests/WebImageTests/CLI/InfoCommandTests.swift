import Foundation
import Testing
@testable import WebImage

@Suite
struct InfoCommandTests {
    func json(_ path: String, _ extra: [String] = []) throws -> [String: Any] {
        let output = try CLIRunner.run(["info", "--json"] + extra + [Corpus.directory.appendingPathComponent(path).path])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n")
        #expect(lines.count == 1, "exactly one JSON object")
        return try #require(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
    }

    @Test func animatedGIFReportsFramesDurationsLoopAndHashes() throws {
        let object = try json("gif/chi.gif")
        #expect(object["format"] as? String == "gif")
        #expect(object["width"] as? Int == 320 && object["height"] as? Int == 240)
        #expect(object["frameCount"] as? Int == 31)
        #expect(object["loopCount"] as? Int == 0)
        #expect((object["durationsMs"] as? [Double])?.count == 31)
        #expect(object["exifOrientation"] is NSNull)
        let frames = try #require(object["frames"] as? [[String: String]])
        #expect(frames.count == 31)
        #expect(frames[0]["rgbaSHA256"] == "36ec6104a312ddeda9fe6e63ef430ff7c43e635b947eb5e029f027c4bdd032c5")
    }

    /// `info` reports what the file declares: no loop block is null, though the image plays once.
    @Test func aGIFWithoutALoopBlockReportsNullAndPlaysOnce() throws {
        let object = try json("gif/animated_noloop.gif")
        #expect(object["loopCount"] is NSNull)
        let text = try CLIRunner.run(["info", Corpus.directory.appendingPathComponent("gif/animated_noloop.gif").path])
        #expect(text.stdout.contains("loop count: none declared (plays once)"), "\(text.stdout)")
    }

    @Test func orientationIsAppliedUnlessRaw() throws {
        let upright = try json("jpeg/hopper_orientation_6.jpg")
        let raw = try json("jpeg/hopper_orientation_6.jpg", ["--raw-orientation"])
        #expect(upright["exifOrientation"] as? Int == 6 && raw["exifOrientation"] as? Int == 6)
        #expect(upright["width"] as? Int == raw["height"] as? Int)
        #expect((upright["durationsMs"] as? [Any])?.isEmpty == true)
        #expect(upright["loopCount"] is NSNull)
    }

    @Test func undecodableFileExitsOneWithOneLine() throws {
        let output = try CLIRunner.run(["info", "--json", Corpus.directory.appendingPathComponent("png/xc1n0g08.png").path])
        #expect(output.status == 1)
        #expect(output.stdout.contains("\"error\":"), "one JSON line, with the error")
        #expect(output.stderr.split(separator: "\n").count == 1)
        let missing = try CLIRunner.run(["info", "/nonexistent.png"])
        #expect(missing.status == 1)
    }

    @Test func bundledSamplesAreTheDefault() throws {
        let output = try CLIRunner.run(["info", "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.split(separator: "\n").count >= 7)
    }

    @Test func convertReencodesByExtensionAndFitsTheSize() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = Corpus.directory.appendingPathComponent("webp/1.webp").path
        for ext in ["png", "jpg", "webp", "gif"] {
            let out = directory.appendingPathComponent("out.\(ext)").path
            let result = try CLIRunner.run(["convert", input, out, "--max-pixel-size", "100", "--quality", "80"])
            #expect(result.status == 0, "\(result.stderr)")
            let image = try Image(contentsOf: URL(fileURLWithPath: out))
            #expect(image.format == ImageFormat(fileExtension: ext) && image.width == 100)
        }
        #expect(try CLIRunner.run(["convert", input, directory.appendingPathComponent("x.bmp").path]).status != 0)
        #expect(try CLIRunner.run(["convert", input, "/nonexistent-dir/x.png"]).status != 0)
        #expect(try CLIRunner.run(["convert", "/nonexistent.png", directory.appendingPathComponent("x.png").path]).status == 1)
    }

    /// `--depth source` keeps a 16-bit PNG's depth through PNG, AVIF and JPEG XL; the default,
    /// 8, writes 8 bits; a bad value is a usage error.
    @Test func convertKeepsTheDepthWhenAsked() throws {
        let directory = TemporaryDirectory("webimage-cli-depth")
        defer { directory.remove() }
        let input = Corpus.directory.appendingPathComponent("png/basn2c16.png").path
        let deep = directory.url.appendingPathComponent("deep.png").path, plain = directory.url.appendingPathComponent("plain.png").path
        let kept = try CLIRunner.run(["convert", input, deep, "--depth", "source"])
        #expect(kept.status == 0 && kept.stdout.contains("16 bits a channel"), "\(kept.stdout) \(kept.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: deep))[24] == 16)
        #expect(try CLIRunner.run(["convert", input, plain]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain))[24] == 8)
        var options = ImageDecodingOptions()
        options.bitDepth = .source
        let original = try ImageCoders.shared.decode(try Data(contentsOf: URL(fileURLWithPath: input)), options: options)
        #expect(try ImageCoders.shared.decode(try Data(contentsOf: URL(fileURLWithPath: deep)), options: options).bitmap == original.bitmap)
        for (ext, bits, note) in [("avif", nil, "10 bits a channel"), ("avif", "12", "12 bits a channel"),
                                  ("heic", "12", "12 bits a channel"), ("jxl", nil, "16 bits a channel")] {
            let out = directory.url.appendingPathComponent("deep.\(ext)").path
            let result = try CLIRunner.run(["convert", input, out, "--depth", "16"] + (bits.map { ["--bits-per-sample", $0] } ?? []))
            #expect(result.status == 0 && result.stdout.contains(note), "\(ext): \(result.stdout) \(result.stderr)")
            if ext != "jxl" {
                let format = ImageFormat(fileExtension: ext) ?? .avif
                #expect(try CodedDepthTests.codedDepth(Data(contentsOf: URL(fileURLWithPath: out)), format) == Int(bits ?? "10"))
            }
        }
        #expect(try CLIRunner.run(["convert", input, deep, "--depth", "12"]).status == 2)
        #expect(try CLIRunner.run(["convert", input, deep, "--depth", "16", "--bits-per-sample", "11"]).status == 2)
    }

    /// `--dynamic-range high` keeps an HDR PNG (cICP) as HDR through PNG and AVIF; the default
    /// tone-maps it to 8-bit sRGB; a bad value is a usage error.
    @Test func convertKeepsHDRWhenAsked() throws {
        let directory = TemporaryDirectory("webimage-cli-hdr")
        defer { directory.remove() }
        let input = directory.url.appendingPathComponent("hdr.png").path
        try ImageCoders.shared.encode(HDRFormatsTests.hdrImage(), as: .png).write(to: URL(fileURLWithPath: input))
        let kept = directory.url.appendingPathComponent("kept.png").path, mapped = directory.url.appendingPathComponent("mapped.png").path
        #expect(try CLIRunner.run(["convert", input, kept, "--dynamic-range", "high"]).status == 0)
        #expect(try CLIRunner.run(["convert", input, mapped]).status == 0)
        var keep = ImageDecodingOptions()
        keep.dynamicRange = .high
        let keptImage = try ImageCoders.shared.decode(try Data(contentsOf: URL(fileURLWithPath: kept)), options: keep)
        #expect(keptImage.colorInfo.hdrCICP?.transferCharacteristics == 16 && keptImage.bitmap.pixelFormat == .rgba16)
        let mappedData = try Data(contentsOf: URL(fileURLWithPath: mapped))
        #expect(mappedData[24] == 8 && mappedData.range(of: Data("cICP".utf8)) == nil)
        #expect(try CLIRunner.run(["convert", input, mapped, "--dynamic-range", "bright"]).status == 2)
    }
}

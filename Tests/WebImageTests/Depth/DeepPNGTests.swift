import Foundation
import Testing
@testable import WebImage
@testable import WebImageIsolation
import CWebImageIsolation

/// 16-bit PNGs kept at their depth (`ImageDecodingOptions.bitDepth = .source`): the corpus's
/// PngSuite files against the 8-bit decode and Pillow, round trips, and the 8-bit paths a deep
/// bitmap meets (transformers, other encoders, orientation, colour conversion).
@Suite struct DeepPNGTests {
    static var deep: ImageDecodingOptions { .sourceDepth }

    static let sixteenBit = ["basn0g16.png", "basn2c16.png", "basn4a16.png", "basn6a16.png", "basi2c16.png", "basi6a16.png",
                             "RGBA16PNG.png", "bgan6a16.png"]

    static func corpus(_ name: String) throws -> Data { try Corpus.data("png/" + name) }

    /// Each 16-bit value's high byte is the 8-bit decode's value (libpng's own reduction).
    @Test(arguments: sixteenBit) func aSixteenBitFileKeepsItsDepth(_ name: String) throws {
        let data = try Self.corpus(name)
        let deep = try ImageCoders.shared.decode(data, options: Self.deep)
        let eight = try ImageCoders.shared.decode(data)
        #expect(deep.bitmap.pixelFormat == .rgba16, "\(name)")
        let values = try #require(deep.bitmap.rgba16)
        #expect(values.map { UInt8($0 >> 8) } == eight.bitmap.rgba, "\(name)")
        // Not the 8-bit values widened: the low bytes carry information (RGBA16PNG.png's are widened).
        if name != "RGBA16PNG.png" { #expect(values.contains { $0 & 0xFF != $0 >> 8 }, "\(name)") }
    }

    /// Pillow reads a 16-bit grey PNG as its own 16-bit values ("I;16"): the same numbers.
    @Test func greyValuesAreThoseOfPillow() throws {
        let dir = TemporaryDirectory("deep-png")
        defer { dir.remove() }
        let input = dir.url.appendingPathComponent("in.png")
        try Self.corpus("basn0g16.png").write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Pillow.python)
        process.arguments = ["-c", "import sys; from PIL import Image; im = Image.open(sys.argv[1]); "
                             + "assert im.mode in ('I;16', 'I'); sys.stdout.write(','.join(str(v) for v in im.getdata()))", input.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let pillow = text.split(separator: ",").compactMap { UInt16($0) }
        let ours = try #require(try ImageCoders.shared.decode(Self.corpus("basn0g16.png"), options: Self.deep).bitmap.rgba16)
        #expect(pillow.count == ours.count / 4 && !pillow.isEmpty)
        #expect(stride(from: 0, to: ours.count, by: 4).map { ours[$0] } == pillow)
    }

    /// Decoded deep, written as PNG, decoded deep again: every value the same, and the file is
    /// a 16-bit PNG (its IHDR says so).
    @Test(arguments: sixteenBit) func aRoundTripIsExact(_ name: String) throws {
        let image = try ImageCoders.shared.decode(Self.corpus(name), options: Self.deep)
        let encoded = try ImageCoders.shared.encode(image, as: .png)
        #expect(encoded[24] == 16, "\(name): IHDR bit depth")
        let again = try ImageCoders.shared.decode(encoded, options: Self.deep)
        #expect(again.bitmap == image.bitmap, "\(name)")
    }

    /// The same at low effort, where the rows are unfiltered and compressed by libdeflate: the
    /// 16-bit samples written big-endian, with and without alpha.
    @Test(arguments: sixteenBit) func aFastRoundTripIsExact(_ name: String) throws {
        let image = try ImageCoders.shared.decode(Self.corpus(name), options: Self.deep)
        let encoded = try ImageCoders.shared.encode(image, as: .png, options: ImageEncodingOptions(effort: 0.1))
        #expect(encoded[24] == 16, "\(name): IHDR bit depth")
        #expect(encoded[25] == (image.bitmap.hasTransparency ? 6 : 2), "\(name): IHDR colour type")
        #expect(try ImageCoders.shared.decode(encoded, options: Self.deep).bitmap == image.bitmap, "\(name)")
    }

    @Test func anEightBitSourceStaysEightBit() throws {
        let image = try ImageCoders.shared.decode(Self.corpus("basn6a08.png"), options: Self.deep)
        #expect(image.bitmap.pixelFormat == .rgba8)
    }

    /// Transformers and 8-bit encoders take a deep image rounded once; orientation keeps the depth.
    @Test func eightBitPathsRoundADeepImageOnce() throws {
        let image = try ImageCoders.shared.decode(Self.corpus("basn2c16.png"), options: Self.deep)
        let rounded = image.bitmap.converted(to: .rgba8)
        #expect(rounded.rgba == (try #require(image.bitmap.rgba16)).map { UInt8((UInt32($0) * 255 + 32767) / 65535) })
        #expect(rounded.converted(to: .rgba16).converted(to: .rgba8) == rounded)
        let resized = try ResizingTransformer(width: 16, height: 16).transform(image)
        #expect(resized.bitmap.pixelFormat == .rgba8 && resized.width == 16)
        #expect(resized.bitmap == (try ResizingTransformer(width: 16, height: 16).transform(Image(bitmap: rounded))).bitmap)
        let jpeg = try ImageCoders.shared.encode(image, as: .jpeg)
        #expect(try ImageCoders.shared.decode(jpeg).width == image.width)
        let webp = try ImageCoders.shared.encode(image, as: .webp, options: .init(lossless: true))
        #expect(try ImageCoders.shared.decode(webp).bitmap == rounded)
        let turned = image.bitmap.oriented(.right)
        #expect(turned.pixelFormat == .rgba16 && turned.width == image.height)
        #expect(turned.oriented(.left) == image.bitmap)
        // A size-reducing decode averages in 8 bits.
        var small = Self.deep
        small.maxPixelSize = 8
        #expect(try ImageCoders.shared.decode(Self.corpus("basn2c16.png"), options: small).bitmap.pixelFormat == .rgba8)
    }

    /// A 16-bit PNG with a Display P3 profile is converted at its depth (lcms2's 16-bit
    /// transform). Made of the corpus's 8-bit P3 PNG widened (v * 257): rounded back to 8 bits,
    /// within 2 of the 8-bit file's own conversion (each within 1 of the exact value), and
    /// nearly all equal.
    @Test func colourIsConvertedAtDepth() throws {
        let source = try ModernCorpus.data("icc/png_displayp3.png")
        let original = try ImageCoders.shared.decode(source, options: .init(colorSpace: .original))
        var widened = Image(bitmap: original.bitmap.converted(to: .rgba16))
        widened.colorInfo = original.colorInfo
        let sixteen = try ImageCoders.shared.encode(widened, as: .png)
        #expect(sixteen[24] == 16)
        let deep = try ImageCoders.shared.decode(sixteen, options: Self.deep)
        #expect(deep.bitmap.pixelFormat == .rgba16 && deep.colorInfo.isEmpty)
        let distance = try #require(PixelDistance(deep.bitmap.converted(to: .rgba8), try ImageCoders.shared.decode(source).bitmap))
        #expect(distance.maxAbs <= 2 && distance.meanAbs < 0.2, "max \(distance.maxAbs), mean \(distance.meanAbs)")
        #expect(deep.bitmap != widened.bitmap)
    }
}

/// A deep decode in a decoding worker: the request asks for the source's depth, the reply says
/// the pixels are 16-bit, and the pool reads them as such.
@Suite struct DeepIsolationTests {
    @Test func aWorkerKeepsTheDepth() async throws {
        let pool = try DecodingWorkerPoolTests.pool()
        defer { pool.shutdown() }
        let data = try DeepPNGTests.corpus("basn6a16.png")
        let isolated = try await pool.decode(data, options: DeepPNGTests.deep)
        let here = try ImageCoders.shared.decode(data, options: DeepPNGTests.deep)
        #expect(isolated.bitmap.pixelFormat == .rgba16 && isolated.bitmap == here.bitmap)
        #expect(try await pool.decode(data, options: .init()).bitmap.pixelFormat == .rgba8)
    }

    @Test func aReplyCarriesTheDepth() throws {
        var decoded = WorkerReplyTests.decoded
        decoded.deep = true
        guard case .decoded(let header)? = WorkerReply(parsing: WorkerReply.message(decoded)) else { Issue.record("not parsed"); return }
        #expect(header.deep && header.pixelBytes == 3 * 2 * 8)
        let fd = WorkerReplyTests.file(decoded)
        defer { close(fd) }
        let image = try #require(DecodingWorkerPool.image(header, in: fd, scale: 1, maximumBytes: 1 << 20))
        #expect(image.bitmap.pixelFormat == .rgba16 && image.bitmap.byteCount == 48)
        // A file of 8-bit pixels does not pass for 16-bit ones: its size is wrong.
        var eight = decoded
        eight.deep = false
        let short = WorkerReplyTests.file(eight)
        defer { close(short) }
        #expect(DecodingWorkerPool.image(header, in: short, scale: 1, maximumBytes: 1 << 20) == nil)
    }
}

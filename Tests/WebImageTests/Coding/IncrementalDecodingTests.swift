import CWebImageSystem
import Foundation
import Testing
@testable import WebImage

@Suite struct IncrementalDecodingTests {
    /// Feeds `data` in `chunks` pieces, asking for a preview after each; returns the previews.
    func feed(_ data: Data, chunks: Int) throws -> (previews: [PartialImage], final: Image) {
        let decoder = try #require(ImageCoders.shared.makeIncrementalDecoder(for: data.prefix(16)))
        var previews: [PartialImage] = []
        let step = max(1, data.count / chunks)
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + step)
            try decoder.append(data[offset..<end])
            if let preview = try decoder.preview() { previews.append(preview) }
            offset = end
        }
        return (previews, try decoder.finish())
    }

    @Test func baselineJPEGFillsRowByRow() throws {
        let data = try Image(bitmap: Fixtures.gradient(width: 256, height: 256, opaque: true)).encoded(as: .jpeg)
        let (previews, final) = try feed(data, chunks: 8)
        #expect(previews.count >= 4)
        let rows = previews.map(\.rowsDecoded)
        #expect(rows == rows.sorted() && Set(rows).count == rows.count, "a preview without new rows")
        // No preview once every byte is in: it would be the final image.
        #expect(rows.first! < 256 && rows.last! < 256)
        #expect(final.bitmap == (try Image(data: data)).bitmap)
    }

    @Test func progressiveJPEGShowsWholeImageScanByScan() throws {
        let data = try ImageCoders.shared.encode(Image(bitmap: Fixtures.gradient(width: 256, height: 256, opaque: true)), as: .jpeg,
                                                 options: ImageEncodingOptions(progressive: true))
        let (previews, final) = try feed(data, chunks: 10)
        #expect(previews.count >= 3)
        #expect(previews.allSatisfy { $0.rowsDecoded == 256 })
        let scans = previews.map(\.scans)
        #expect(scans == scans.sorted() && scans.last! > scans.first!)
        #expect(final.bitmap == (try Image(data: data)).bitmap)
    }

    @Test(arguments: ["png/basn6a08.png", "png/basi6a08.png", "apng/TestImageAnimated.apng"])
    func pngPlainAndInterlaced(path: String) throws {
        let data = try Corpus.data(path)
        let (previews, final) = try feed(data, chunks: 6)
        #expect(!previews.isEmpty)
        let full = try Image(data: data)
        #expect(final.bitmap == full.bitmap && final.frameCount == full.frameCount)
    }

    @Test func webpFillsRowByRow() throws {
        let data = try Corpus.data("webp/1.webp")
        let (previews, final) = try feed(data, chunks: 8)
        #expect(previews.count >= 3)
        #expect(previews.map(\.rowsDecoded) == previews.map(\.rowsDecoded).sorted())
        #expect(final.bitmap == (try Image(data: data)).bitmap)
    }

    @Test func gifShowsCompleteFrames() throws {
        let data = try Corpus.data("gif/chi.gif")
        let (previews, final) = try feed(data, chunks: 12)
        let counts = previews.map(\.image.frameCount)
        #expect(!counts.isEmpty && counts == counts.sorted())
        #expect(counts.first! < final.frameCount)
        #expect(final.frameCount == 31)
    }

    @Test func truncatedDataFailsAtFinish() throws {
        for path in ["png/basn6a08.png", "jpeg/hopper_orientation_6.jpg", "webp/1.webp", "gif/chi.gif"] {
            let data = try Corpus.data(path)
            let decoder = try #require(ImageCoders.shared.makeIncrementalDecoder(for: data.prefix(16)))
            try decoder.append(data.prefix(data.count / 2))
            #expect(throws: ImageError.self, "\(path)") { _ = try decoder.finish() }
        }
    }

    @Test func tooLargeIsReportedWhileLoading() throws {
        let decoder = try #require(ImageCoders.shared.makeIncrementalDecoder(for: Fixtures.pngHeader(width: 1, height: 1)))
        #expect(throws: ImageError.self) { try decoder.append(Fixtures.pngHeader(width: 50_000, height: 50_000)) }
    }

    /// Every JPEG of the corpus fed in random pieces: the streaming decoder's final image is the
    /// whole-file decoder's, pixel for pixel (or both fail), without a second decode, and its
    /// previews are never the final image.
    @Test func everyCorpusJPEGStreamsToTheSameImageAsTheWholeFileDecoder() throws {
        var streamed = 0
        for options in [ImageDecodingOptions(), ImageDecodingOptions(maxPixelSize: 64)] {
            streamed += try streamCorpus("jpeg", coder: JPEGCoder(), options: options, seed: 7, maxChunk: 16_384) { data, _ in
                !isArithmeticCoded(data)
            }
        }
        #expect(streamed > 150)
    }

    /// Every WebP of the corpus fed in random pieces: a still image's final pixels come from
    /// libwebp's incremental state and equal the whole-file decoder's (or both fail).
    @Test func everyCorpusWebPStreamsToTheSameImageAsTheWholeFileDecoder() throws {
        #expect(try streamCorpus("webp", coder: WebPCoder(), options: .init(), seed: 11, maxChunk: 8192) { _, image in
            !image.isAnimated
        } > 10)
    }

    /// Every PNG and APNG of the corpus fed in random pieces: a still image's final pixels are
    /// libpng's progressive buffer and equal the whole-file decoder's (or both fail).
    @Test func everyCorpusPNGStreamsToTheSameImageAsTheWholeFileDecoder() throws {
        let still: (Data, Image) -> Bool = { data, _ in !PNGChunks(data).chunks.contains { $0.type == "acTL" } }
        let streamed = try streamCorpus("png", coder: PNGCoder(), options: .init(), seed: 13, maxChunk: 4096, streamsOnce: still)
            + streamCorpus("apng", coder: PNGCoder(), options: .init(), seed: 17, maxChunk: 4096, streamsOnce: still)
        #expect(streamed > 150)
    }

    /// A still PNG or WebP decoder keeps the file's metadata, not its body (the transfer holds
    /// the body once); an animation is kept whole, as its decoder needs the whole file.
    @Test func stillDecodersKeepTheMetadataNotTheBody() throws {
        // exif.png: its eXIf chunk follows the image data; Exif2.webp: its EXIF chunk too.
        let png = try Corpus.data("png/exif.png"), webp = try Corpus.data("webp/Exif2.webp")
        func kept(_ data: Data, _ decoder: some IncrementalImageDecoder) throws -> Int {
            var offset = 0
            while offset < data.count {
                let end = min(data.count, offset + 4096)
                try decoder.append(data[offset..<end])
                offset = end
            }
            #expect(try decoder.finish().bitmap == (try Image(data: data)).bitmap)
            return (decoder as? PNGIncrementalDecoder)?.keptByteCount ?? (decoder as! WebPIncrementalDecoder).keptByteCount
        }
        #expect(png.count > 100_000 && webp.count > 50_000)
        #expect(try kept(png, PNGIncrementalDecoder(options: .init())) < 1_000)
        #expect(try kept(webp, WebPIncrementalDecoder(options: .init())) < 1_000)
        let apng = try Corpus.data("apng/TestImageAnimated.apng")
        #expect(try kept(apng, PNGIncrementalDecoder(options: .init())) == apng.count)
    }

    /// Streams every file of a corpus folder through `coder`'s incremental decoder in random
    /// pieces, asking for a preview after each, and compares the end with a whole-file decode
    /// (and, where `streamsOnce` says the file streams, checks that no whole-file decode ran);
    /// returns how many files both decoded.
    func streamCorpus(_ folder: String, coder: some ImageCoder, options: ImageDecodingOptions, seed: UInt64,
                      maxChunk: Int, streamsOnce: (Data, Image) -> Bool) throws -> Int {
        let directory = Corpus.directory.appendingPathComponent(folder)
        var generator = SeededGenerator(seed: seed)
        var streamed = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            let label = "\(folder)/\(name) \(options.maxPixelSize ?? 0)"
            let whole = Result { try coder.decode(data, options: options) }
            guard let decoder = coder.makeIncrementalDecoder(options: options) else { Issue.record("no decoder"); continue }
            let decodes = DecodeCounter()
            let incremental = CodecBridge.$wholeFileDecodes.withValue(decodes) { Result { () throws -> Image in
                var offset = 0
                while offset < data.count {
                    let end = min(data.count, offset + Int.random(in: 1...maxChunk, using: &generator))
                    try decoder.append(data[offset..<end])
                    if let preview = try decoder.preview() { #expect(preview.rowsDecoded <= preview.image.height, "\(label)") }
                    offset = end
                }
                return try decoder.finish()
            } }
            switch (whole, incremental) {
            case (.success(let a), .success(let b)):
                #expect(a.bitmap == b.bitmap && a.frameCount == b.frameCount, "\(label): the streamed image differs")
                #expect(a.exifOrientation == b.exifOrientation, "\(label)")
                if streamsOnce(data, a) { #expect(decodes.count.load(ordering: .relaxed) == 0, "\(label): decoded again") }
                streamed += 1
            case (.failure, .failure): break
            case (.success, .failure(let error)): Issue.record("\(label): only the stream failed: \(error)")
            case (.failure(let error), .success): Issue.record("\(label): only the whole-file decode failed: \(error)")
            }
        }
        return streamed
    }

    /// Whether a JPEG's frame header is an arithmetic-coded one (SOF9 to SOF15 but not DHT/JPG/DAC).
    func isArithmeticCoded(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        return bytes.indices.dropLast().contains { bytes[$0] == 0xFF && [0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF].contains(bytes[$0 + 1]) }
    }

    /// libwebp allocates the whole image as soon as it reads a size, and a bare VP8L bitstream
    /// (no RIFF container) states one in its first five bytes: the incremental decoder holds the
    /// first bytes until it has read the container's size and checked it, and refuses a stream
    /// with none. A few bytes claiming 16384 x 16384 allocate nothing large (the incremental
    /// fuzzer's out-of-memory finding, `incremental-oom-b29e2a5b...`); a container stating that
    /// size is refused as too large before libwebp reads a byte.
    @Test func aHugeSizeInTheFirstBytesIsCheckedBeforeLibwebpReadsThem() throws {
        let options = ImageDecodingOptions(pixelLimit: 4_000_000)
        let bare = Data([0x2f, 0xff, 0xff, 0xff, 0x0f] + [UInt8](repeating: 0x88, count: 14))
        let decoder = try #require(WebPCoder().makeIncrementalDecoder(options: options))
        let before = wi_heap_bytes_in_use()
        try decoder.append(bare)
        let grown = Int(wi_heap_bytes_in_use()) - Int(before)
        #expect(grown < 64 << 20, "\(grown) bytes allocated")
        #expect(throws: ImageError.undecodable(.webp, reason: "not a WebP container")) { try decoder.finish() }
        // The same bitstream in a RIFF container: its size is read and refused.
        let payload = bare + Data(repeating: 0x88, count: 21)
        var riff = Data("RIFF".utf8)
        riff.append(contentsOf: withUnsafeBytes(of: UInt32(4 + 8 + payload.count).littleEndian) { Array($0) })
        riff.append(contentsOf: Array("WEBPVP8L".utf8))
        riff.append(contentsOf: withUnsafeBytes(of: UInt32(payload.count).littleEndian) { Array($0) })
        riff.append(payload)
        let contained = try #require(WebPCoder().makeIncrementalDecoder(options: options))
        #expect(throws: ImageError.tooLarge(width: 16384, height: 16384, limit: 4_000_000)) { try contained.append(riff) }
    }
}

/// A small deterministic generator (SplitMix64) for reproducible random chunking.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

import Foundation
import Testing
@testable import WebImage

/// A preview shows something the last one did not (new rows, a new pass or scan, a new frame)
/// or is nil, and costs little when it is nil: fed a byte at a time with a preview asked after
/// every byte, each decoder hands out only previews that move forward.
@Suite struct PreviewNoveltyTests {
    /// What a preview shows: its frames, passes or scans, and rows.
    struct Shown {
        var frames: Int, scans: Int, rows: Int
    }

    /// Feeds `data` a byte at a time, asking for a preview after each, and notes what each
    /// preview showed (not the previews themselves: a regression would make thousands).
    static func previews(_ data: Data) throws -> [Shown] {
        let decoder = try #require(ImageCoders.shared.makeIncrementalDecoder(for: data.prefix(16)))
        var previews: [Shown] = []
        var offset = 0
        while offset < data.count {
            try decoder.append(data[offset..<offset + 1])
            if let preview = try decoder.preview() {
                previews.append(Shown(frames: preview.image.frameCount, scans: preview.scans, rows: preview.rowsDecoded))
            }
            offset += 1
        }
        _ = try decoder.finish()
        return previews
    }

    @Test(arguments: ["png/basn6a08.png", "png/basi6a08.png", "webp/1.webp", "webp/1_webp_ll.webp"])
    func stillPreviewsAlwaysShowNewRows(path: String) throws {
        let previews = try Self.previews(try Corpus.data(path))
        #expect(previews.count >= 2, "\(path)")
        // (pass, rows) strictly grows: a plain image has one pass, an interlaced PNG seven.
        let progress = previews.map { [$0.scans, $0.rows] }
        for (earlier, later) in zip(progress, progress.dropFirst()) {
            #expect(earlier.lexicographicallyPrecedes(later), "\(path): \(earlier) then \(later)")
        }
        #expect(previews.allSatisfy { $0.rows > 0 }, "an empty preview")
    }

    @Test(.timeLimit(.minutes(1)), arguments: ["gif/chi.gif", "apng/TestImageAnimated.apng", "apng/animated_ball.png"])
    func animationPreviewsAlwaysHaveMoreFrames(path: String) throws {
        let data = try Corpus.data(path)
        // An APNG first shows its default image row by row, then the frames that arrived.
        let progress = try Self.previews(data).map { [$0.frames, $0.rows] }
        #expect(progress.filter { $0[0] > 1 }.count >= 2, "\(path)")
        for (earlier, later) in zip(progress, progress.dropFirst()) {
            #expect(earlier.lexicographicallyPrecedes(later), "\(path): \(earlier) then \(later)")
        }
        #expect(progress.last![0] <= (try Image(data: data)).frameCount)
    }

    /// The counter agrees with giflib: at every cut of every corpus GIF, the frames a tolerant
    /// decode of the prefix plays are the frames the counter found complete.
    @Test func theFrameCounterAgreesWithGiflibAtEveryCut() throws {
        let directory = Corpus.directory.appendingPathComponent("gif")
        var checked = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where name.hasSuffix(".gif") {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            guard data.count < 200_000, let whole = try? GIFCoder().decode(data, options: .init()), whole.frameCount > 1 else { continue }
            var counter = GIFFrameCounter()
            for cut in stride(from: 1, through: data.count, by: max(1, data.count / 97)) {
                let prefix = data.prefix(cut)
                counter.advance(in: prefix)
                let decoded = (try? GIFCoder.decode(prefix, options: .init(), tolerateTruncation: true))?.frameCount ?? 0
                #expect(counter.completeFrames == decoded, "\(name) cut at \(cut)")
            }
            checked += 1
        }
        #expect(checked >= 10)
    }

    /// An animated WebP is decoded whole: no preview is tried before the RIFF header's length
    /// has arrived.
    @Test func anAnimatedWebPIsNotDecodedBeforeItIsAllThere() throws {
        let data = try Corpus.data("webp/TestImageAnimated.webp")
        let decoder = try #require(WebPCoder().makeIncrementalDecoder(options: .init()))
        try decoder.append(data.dropLast())
        #expect(try decoder.preview()?.rowsDecoded == nil)
        try decoder.append(data.suffix(1))
        #expect(try decoder.preview()?.image.frameCount == (try Image(data: data)).frameCount)
    }
}

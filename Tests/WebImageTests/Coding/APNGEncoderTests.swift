import Foundation
import Testing
@testable import WebImage

/// The APNG encoder: every animated file of the corpus (GIF, APNG, WebP) decoded, written as
/// APNG, and read back by our decoder and by Pillow's: same frames, pixels, durations and loop.
@Suite struct APNGEncoderTests {
    @Test func anAnimationEncodedAsPNGKeepsFramesDurationsAndLoopCount() throws {
        let frames = (0..<4).map { i in
            ImageFrame(bitmap: Fixtures.gradient(width: 40, height: 30, opaque: i % 2 == 0), duration: [0.05, 0.1, 1.5, 70][i])
        }
        for loop in [0, 1, 3] {
            let image = Image(frames: frames, loopCount: loop, format: .png)
            let data = try image.encoded(as: .png)
            let decoded = try Image(data: data)
            #expect(decoded.format == .png && decoded.frameCount == 4)
            #expect(decoded.loopCount == loop)
            #expect(decoded.frameDurations.map { ($0 * 1000).rounded() } == [50, 100, 1500, 70_000])
            for index in 0..<4 { #expect(try decoded.frame(at: index).bitmap == frames[index].bitmap, "frame \(index)") }
        }
        // A still image stays a plain PNG (no acTL).
        let still = try Image(bitmap: Fixtures.gradient(width: 8, height: 8)).encoded(as: .png)
        #expect(!PNGChunks(still).chunks.contains { $0.type == "acTL" })
    }

    @Test func everyAnimationOfTheCorpusRoundTripsThroughOurDecoderAndPillows() throws {
        // Whole animations and the broken ones ("partial": what decodes of them is encoded).
        let entries = Corpus.entries().filter { $0["is_animated"] as? Bool == true && $0["status"] as? String != "error" }
        #expect(entries.count > 110)
        let dir = TemporaryDirectory("apng"); defer { dir.remove() }
        var expected: [String: [String]] = [:]
        var loops: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let path = try #require(entry["path"] as? String)
            guard let source = try? Image(data: Corpus.data(path)) else { continue }
            let data = try APNGEncoder.encode(source, level: 1)
            let back = try Image(data: data)
            #expect(back.frameCount == source.frameCount, "\(path)")
            #expect(back.loopCount == source.loopCount, "\(path)")
            #expect(back.frameDurations.map { ($0 * 1000).rounded() } == source.frameDurations.map { ($0 * 1000).rounded() }, "\(path)")
            let hashes = try (0..<source.frameCount).map { try source.frame(at: $0).bitmap.sha256 }
            #expect(try (0..<back.frameCount).map { try back.frame(at: $0).bitmap.sha256 } == hashes, "\(path)")
            let name = "\(index).png"
            try data.write(to: dir.url.appendingPathComponent(name))
            expected[name] = hashes
            loops[name] = source.loopCount ?? 0
        }
        // Pillow, an independent reader, in one process for every file.
        let script = """
        import hashlib, json, os, sys
        from PIL import Image
        out = {}
        folder = sys.argv[1]
        for name in sorted(os.listdir(folder)):
            im = Image.open(os.path.join(folder, name))
            frames = []
            for i in range(getattr(im, "n_frames", 1)):
                im.seek(i)
                frames.append(hashlib.sha256(im.convert("RGBA").tobytes()).hexdigest())
            out[name] = {"frames": frames, "loop": im.info.get("loop")}
        print(json.dumps(out))
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Pillow.python)
        process.arguments = ["-c", script, dir.url.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let pillow = try #require(JSONSerialization.jsonObject(with: text) as? [String: [String: Any]])
        for (name, hashes) in expected {
            let seen = try #require(pillow[name])
            #expect(seen["frames"] as? [String] == hashes, "\(name): Pillow sees other frames")
            #expect(seen["loop"] as? Int == loops[name], "\(name): loop")
        }
    }
}

/// Progressive APNG previews grow in frame count as frames arrive (as GIF previews do).
@Suite struct APNGPreviewTests {
    @Test func previewsOfAnAPNGGrowInFrameCount() throws {
        let frames = (0..<6).map { i in
            ImageFrame(bitmap: Fixtures.gradient(width: 48, height: 32, opaque: i % 2 == 0), duration: 0.1)
        }
        let data = try Image(frames: frames, loopCount: 0, format: .png).encoded(as: .png)
        let decoder = try #require(PNGCoder().makeIncrementalDecoder(options: .init()))
        var counts: [Int] = []
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + max(1, data.count / 30))
            try decoder.append(data[offset..<end])
            offset = end
            if let preview = try decoder.preview() {
                counts.append(preview.image.frameCount)
                // Every frame shown is a whole, real frame, never a half-received one.
                for index in 0..<preview.image.frameCount where preview.image.frameCount > 1 {
                    #expect(try preview.image.frame(at: index).bitmap == frames[index].bitmap, "frame \(index) of \(preview.image.frameCount)")
                }
            }
        }
        #expect(counts.count > 5)
        #expect(counts == counts.sorted(), "the frame count never shrinks: \(counts)")
        #expect(Set(counts).count >= 4, "previews grow frame by frame: \(counts)")
        #expect(counts.last == 6)
        let final = try decoder.finish()
        #expect(final.frameCount == 6)
        #expect(try decoder.preview() == nil, "no new data, no preview")
    }
}

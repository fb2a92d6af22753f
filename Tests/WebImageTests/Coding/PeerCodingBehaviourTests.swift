import Foundation
import Testing
@testable import WebImage

/// Coding behaviours SDWebImage's and Nuke's tests expect: a GIF without a loop block plays
/// once, and a pixel budget is never exceeded.
@Suite struct PeerCodingBehaviourTests {
    @Test func aGIFWithoutALoopBlockPlaysOnceAndStaysThatWay() throws {
        let data = try Data(contentsOf: Corpus.directory.appendingPathComponent("gif/animated_noloop.gif"))
        let image = try Image(data: data)
        #expect(image.isAnimated)
        #expect(image.loopCount == 1, "plays once, as browsers play it and SDWebImage reports it")
        #expect(image.declaredLoopCount == nil, "the file declares no loop count")
        // Re-encoding must not turn it into "loop forever".
        for format in [ImageFormat.gif, .webp] {
            let again = try Image(data: try ImageCoders.shared.encode(image, as: format))
            #expect(again.loopCount == 1, "\(format): \(String(describing: again.loopCount))")
        }
        // Transforming keeps it too.
        let flipped = try FlippingTransformer(horizontal: true, vertical: false).transform(image)
        #expect(flipped.loopCount == 1 && flipped.declaredLoopCount == nil)
        // A declared count survives a round trip.
        let forever = try Image(data: Data(contentsOf: Corpus.directory.appendingPathComponent("gif/chi.gif")))
        #expect(forever.loopCount == 0 && forever.declaredLoopCount == 0)
        #expect(try Image(data: ImageCoders.shared.encode(forever, as: .gif)).loopCount == 0)
        let still = try Image(data: ManagerHarness.png)
        #expect(still.loopCount == nil && still.declaredLoopCount == nil)
    }

    @Test(arguments: [(4000, 3000), (3000, 4000), (10_000, 7), (7, 10_000), (101, 99), (640, 480), (12_345, 6_789)])
    func aPixelBudgetIsNeverExceeded(_ width: Int, _ height: Int) {
        for budget in [10_000, 1, 2, 999, 65_536, 250_000] {
            let size = ImageDecodingOptions(maxPixelCount: budget).targetSize(width: width, height: height)
            #expect(size.width * size.height <= max(budget, 1), "\(width)x\(height) in \(budget): \(size)")
            guard width * height > budget, size.width > 1, size.height > 1 else { continue }
            // The aspect ratio is kept within one pixel.
            let expectedHeight = Double(size.width) * Double(height) / Double(width)
            #expect(abs(Double(size.height) - expectedHeight) <= 1.0 + Double(height) / Double(width),
                    "\(width)x\(height) -> \(size)")
        }
        #expect(ImageDecodingOptions(maxPixelCount: 10_000).targetSize(width: 4000, height: 3000) == (115, 86))
    }

    @Test func aDecodedImageHonoursThePixelBudget() throws {
        let jpeg = try Image(bitmap: Fixtures.gradient(width: 1200, height: 900, opaque: true)).encoded(as: .jpeg)
        for budget in [10_000, 12_345, 100_000] {
            let image = try Image(data: jpeg, options: ImageDecodingOptions(maxPixelCount: budget))
            #expect(image.width * image.height <= budget, "\(budget): \(image.width)x\(image.height)")
        }
    }
}

/// Decode errors of a load name their input: the URL and the byte count, in one sentence.
@Suite struct NamedDecodeErrorTests {
    @Test func decodeFailuresOfALoadNameTheURLAndTheByteCount() async throws {
        let h = try await ManagerHarness()
        let corrupt = ManagerHarness.png.prefix(60)
        h.server.route("/corrupt.png", .respond(body: corrupt))
        h.server.route("/page.png", .respond(contentType: "text/html", body: Data("<html>hello</html>".utf8)))
        h.server.route("/empty.png", .respond(body: Data()))
        h.server.route("/huge.png", .respond(body: Fixtures.pngHeader(width: 100_000, height: 100_000)))
        let cases: [(String, Int, (ImageError) -> Bool)] = [
            ("/corrupt.png", corrupt.count, { if case .undecodable(.png, _) = $0 { true } else { false } }),
            ("/page.png", 18, { $0 == .unsupportedFormat(.unknown) }),
            ("/empty.png", 0, { $0 == .emptyData }),
            ("/huge.png", Fixtures.pngHeader(width: 100_000, height: 100_000).count, { if case .tooLarge = $0 { true } else { false } }),
        ]
        for (path, count, reason) in cases {
            let url = h.url(path)
            do {
                _ = try await h.manager.image(for: url)
                Issue.record("\(path) decoded")
            } catch let error as ImageError {
                guard case .decodingFailed(let why, let source, let byteCount) = error else { Issue.record("\(path): \(error)"); continue }
                #expect(source == url.absoluteString && byteCount == count && reason(why), "\(path): \(error)")
                let text = error.description
                #expect(text.contains(url.absoluteString) && text.hasSuffix(".") && !text.hasSuffix(".."), "\(text)")
                #expect(text.filter { $0 == "." }.count >= 1 && !text.contains(". The"), "one sentence: \(text)")
                if count > 0 { #expect(text.contains("\(count) bytes"), "\(text)") }
                #expect(await h.manager.isFailedURL(url), "\(path) is still blacklisted")
            }
        }
        await h.finish()
    }
}

import Foundation
import Synchronization
import Testing
@testable import WebImage

/// A JPEG coder whose incremental decoders count the pieces and bytes they are given.
final class AppendCountingJPEGCoder: ImageCoder {
    let appends = Atomic<Int>(0)
    let bytes = Atomic<Int>(0)
    func canDecode(_ data: Data) -> Bool { JPEGCoder().canDecode(data) }
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image { try JPEGCoder().decode(data, options: options) }
    func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        JPEGCoder().makeIncrementalDecoder(options: options).map { Counting(inner: $0, coder: self) }
    }
    func canEncode(_ format: ImageFormat) -> Bool { false }
    func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        throw ImageError.encodingFailed(format, reason: "not in this test")
    }

    final class Counting: IncrementalImageDecoder {
        let inner: any IncrementalImageDecoder
        let coder: AppendCountingJPEGCoder
        init(inner: any IncrementalImageDecoder, coder: AppendCountingJPEGCoder) {
            self.inner = inner
            self.coder = coder
        }
        func append(_ data: Data) throws {
            coder.appends.add(1, ordering: .relaxed)
            coder.bytes.add(data.count, ordering: .relaxed)
            try inner.append(data)
        }
        func preview() throws -> PartialImage? { try inner.preview() }
        func finish() throws -> Image { try inner.finish() }
    }
}

/// A JPEG-recognising coder whose incremental decoders count their pieces and never have a
/// preview to give (as a decoder fed the middle of a macroblock row).
final class NoPreviewCoder: ImageCoder {
    let appends = Atomic<Int>(0)
    let previews = Atomic<Int>(0)
    func canDecode(_ data: Data) -> Bool { JPEGCoder().canDecode(data) }
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image { try JPEGCoder().decode(data, options: options) }
    func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? { Decoder(coder: self) }
    func canEncode(_ format: ImageFormat) -> Bool { false }
    func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        throw ImageError.encodingFailed(format, reason: "not in this test")
    }

    final class Decoder: IncrementalImageDecoder {
        let coder: NoPreviewCoder
        init(coder: NoPreviewCoder) { self.coder = coder }
        func append(_ data: Data) throws { coder.appends.add(1, ordering: .relaxed) }
        func preview() throws -> PartialImage? {
            coder.previews.add(1, ordering: .relaxed)
            return nil
        }
        func finish() throws -> Image { throw ImageError.undecodable(.jpeg, reason: "not in this test") }
    }
}

/// The previewer hands chunks to the incremental decoder when a preview is due (or enough are
/// waiting, or the body is complete), not one by one: a source that trickles bytes does not
/// make the decoder redo its unfinished unit for every few bytes. Every byte still reaches it,
/// and the final image comes from it.
@Suite struct PreviewerBatchingTests {
    @Test(arguments: [Duration.seconds(60), .zero])
    func chunksReachTheDecoderInBatchesBetweenPreviews(interval: Duration) async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.progressiveJPEG
        h.server.route("/p.jpg", .drip(body: body, chunk: 64, interval: .milliseconds(1)))
        let coder = AppendCountingJPEGCoder()
        var context = ImageContext()
        context.coder = coder
        context.previewInterval = interval
        let decodes = DecodeCounter()
        let result = try await CodecBridge.$wholeFileDecodes.withValue(decodes) {
            try await h.manager.result(for: h.url("/p.jpg"), options: [.progressiveLoad, .fromLoaderOnly], context: context)
        }
        #expect(result.image.bitmap == (try JPEGCoder().decode(body, options: .init())).bitmap)
        #expect(decodes.count.load(ordering: .relaxed) == 0, "the final image did not come from the incremental decoder")
        #expect(coder.bytes.load(ordering: .relaxed) == body.count, "the decoder missed bytes")
        let appends = coder.appends.load(ordering: .relaxed)
        if interval == .zero {
            #expect(appends > 10, "a preview is due at every chunk: each is given at once (\(appends) pieces)")
        } else {
            #expect(body.count < Previewer.batchBytes)
            #expect(appends == 1, "no preview was due: the body should reach the decoder in one piece (\(appends) pieces)")
        }
        await h.finish()
    }

    /// A body of unknown length (chunked): no chunk is known to be the last, so the pieces
    /// still waiting when the transfer ends reach the decoder before the final image.
    @Test func theLastPiecesOfABodyOfUnknownLengthReachTheDecoder() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.progressiveJPEG
        h.server.route("/c.jpg", .chunked(body: body, chunk: 64))
        let coder = AppendCountingJPEGCoder()
        var context = ImageContext()
        context.coder = coder
        context.previewInterval = .seconds(60)
        let decodes = DecodeCounter()
        let result = try await CodecBridge.$wholeFileDecodes.withValue(decodes) {
            try await h.manager.result(for: h.url("/c.jpg"), options: [.progressiveLoad, .fromLoaderOnly], context: context)
        }
        #expect(result.image.bitmap == (try JPEGCoder().decode(body, options: .init())).bitmap)
        #expect(coder.bytes.load(ordering: .relaxed) == body.count, "the decoder missed the last bytes")
        #expect(decodes.count.load(ordering: .relaxed) == 0, "the final image did not come from the incremental decoder")
        await h.finish()
    }

    /// A due preview the data cannot give yet is tried again a quarter of an interval later,
    /// not at every chunk that follows: bytes trickling in after it wait in one batch.
    @Test func aPreviewTheDataCannotGiveIsNotRetriedAtEveryChunk() async throws {
        let directory = TemporaryDirectory("previewer-retry")
        defer { directory.remove() }
        let coder = NoPreviewCoder()
        var context = ImageContext()
        context.coder = coder
        context.previewInterval = .seconds(1)
        let cache = ImageCache(namespace: "test", directory: directory.url)
        let url = URL(string: "http://example.com/p.jpg")!
        let request = LoadRequest(url: url, urlString: url.absoluteString, options: [.progressiveLoad],
                                  settings: LoadRequest.Settings(context, cache: cache), isShareable: false)
        var previewer = Previewer(request: request, coders: .shared)
        let body = ManagerHarness.progressiveJPEG
        #expect(previewer.add(body.prefix(64)) == nil)
        try await Task.sleep(for: .milliseconds(1050))
        // The preview is due: the first byte after the interval is fed and a preview asked for.
        // The next 299 usually arrive within a quarter interval (250 ms); a machine slower than
        // that is allowed one more try per quarter that passed.
        let start = ContinuousClock.now
        for offset in 64..<364 { #expect(previewer.add(body[offset..<offset + 1]) == nil) }
        let allowed = 1 + Int((ContinuousClock.now - start) / .milliseconds(250))
        let previews = coder.previews.load(ordering: .relaxed), appends = coder.appends.load(ordering: .relaxed)
        #expect(previews >= 1 && previews <= allowed, "previews asked: \(previews) (allowed \(allowed))")
        #expect(appends >= 1 && appends <= allowed, "pieces fed: \(appends) (allowed \(allowed))")
        // A quarter interval later, the waiting bytes go in one piece and a preview is asked again.
        try await Task.sleep(for: .milliseconds(300))
        #expect(previewer.add(body[364..<365]) == nil)
        #expect(coder.previews.load(ordering: .relaxed) == previews + 1)
        #expect(coder.appends.load(ordering: .relaxed) == appends + 1)
    }
}

import Foundation
import Synchronization
import Testing
@testable import WebImage

/// A JPEG coder that counts whole-file decodes and incremental decoders made.
final class CountingJPEGCoder: ImageCoder {
    let wholeDecodes = Atomic<Int>(0)
    let incrementalDecoders = Atomic<Int>(0)
    func canDecode(_ data: Data) -> Bool { JPEGCoder().canDecode(data) }
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        wholeDecodes.add(1, ordering: .relaxed)
        return try JPEGCoder().decode(data, options: options)
    }
    func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        incrementalDecoders.add(1, ordering: .relaxed)
        return JPEGCoder().makeIncrementalDecoder(options: options)
    }
    func canEncode(_ format: ImageFormat) -> Bool { false }
    func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        throw ImageError.encodingFailed(format, reason: "not in this test")
    }
}

/// A progressive load decodes its bytes once: the final image comes from the incremental
/// decoder's state, not from a decode of the whole body, and no preview is the final image.
@Suite struct DecodeOnceTests {
    @Test(arguments: [true, false])
    func aProgressiveLoadDecodesOnceAndNoPreviewIsTheFinalImage(progressive: Bool) async throws {
        let h = try await ManagerHarness()
        let body = progressive ? ManagerHarness.progressiveJPEG : ManagerHarness.jpeg
        h.server.route("/p.jpg", .drip(body: body, chunk: max(1, body.count / 30), interval: .milliseconds(10)))
        let coder = CountingJPEGCoder()
        var context = ImageContext()
        context.coder = coder
        context.previewInterval = .zero
        var previews: [PartialImage] = []
        var final: ImageResult?
        let decodes = DecodeCounter()
        try await CodecBridge.$wholeFileDecodes.withValue(decodes) {
            for try await event in h.manager.events(for: h.url("/p.jpg"), options: [.progressiveLoad, .fromLoaderOnly], context: context) {
                switch event {
                case .preview(let preview): previews.append(preview)
                case .finished(let result): final = result
                default: break
                }
            }
        }
        let image = try #require(final?.image)
        #expect(image.bitmap == (try JPEGCoder().decode(body, options: .init())).bitmap)
        #expect(!previews.isEmpty, "no preview of a dripped load")
        #expect(previews.allSatisfy { $0.image.bitmap != image.bitmap }, "a preview was the final image")
        #expect(coder.incrementalDecoders.load(ordering: .relaxed) == 1)
        #expect(coder.wholeDecodes.load(ordering: .relaxed) == 0 && decodes.count.load(ordering: .relaxed) == 0,
                "the body was decoded again (at the end or for a preview)")
        await h.finish()
    }

    /// The transfer holds the body once: its chunks are not kept for works that join late. A
    /// progressive work joining a transfer in flight shows no previews and decodes the whole
    /// body at the end; the image is right and there is one request.
    @Test func aWorkJoiningTheTransferLateDecodesTheWholeBody() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.progressiveJPEG
        h.server.route("/p.jpg", .drip(body: body, chunk: max(1, body.count / 30), interval: .milliseconds(15)))
        let manager = h.manager, url = h.url("/p.jpg")
        var first = ImageContext()
        first.previewInterval = .zero
        var late = first
        late.transformer = FlippingTransformer(horizontal: true, vertical: false)
        func load(_ context: ImageContext) async throws -> (previews: Int, image: Image?) {
            var previews = 0
            var image: Image?
            for try await event in manager.events(for: url, options: [.progressiveLoad, .fromLoaderOnly], context: context) {
                if case .preview = event { previews += 1 }
                if case .finished(let result) = event { image = result.image }
            }
            return (previews, image)
        }
        let early = Task { try await load(first) }
        while h.server.requestCount("/p.jpg") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(120))
        let joined = try await load(late)
        let (earlyPreviews, earlyImage) = try await early.value
        let expected = try JPEGCoder().decode(body, options: .init())
        #expect(earlyImage?.bitmap == expected.bitmap && earlyPreviews > 0)
        #expect(joined.image?.bitmap == (try FlippingTransformer(horizontal: true, vertical: false).transform(expected)).bitmap)
        #expect(joined.previews == 0, "previews from a decoder that missed the first chunks")
        #expect(h.server.requestCount("/p.jpg") == 1)
        await h.finish()
    }
}

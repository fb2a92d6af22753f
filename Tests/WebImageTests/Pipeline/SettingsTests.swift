import Foundation
import Testing
@testable import WebImage

/// Settings that had no test of their own: the loader's proxy, status codes and redirect limit,
/// the memory cache's live configuration, the coder registry, the pipeline transformer, the
/// preview interval and the scale factor.
@Suite(.serialized) struct SettingsTests {
    static let png = ManagerHarness.png

    @Test func theProxyReceivesTheRequest() async throws {
        let proxy = TestHTTPServer()
        try await proxy.start()
        // A proxy is sent the absolute URL as the request target.
        proxy.route("http://images.invalid/a.png", .respond(body: Self.png))
        var configuration = HTTPImageLoader.Configuration()
        configuration.proxy = "http://127.0.0.1:\(proxy.port)"
        let loader = HTTPImageLoader(configuration: configuration)
        let (data, _) = try await loader.data(for: ImageLoaderRequest(url: URL(string: "http://images.invalid/a.png")!))
        #expect(data == Self.png)
        #expect(proxy.requestOrder == ["http://images.invalid/a.png"])
        await proxy.stop()
    }

    @Test func customAcceptableStatusCodesAndTheRedirectLimit() async throws {
        let server = TestHTTPServer()
        try await server.start()
        server.route("/gone.png", .respond(status: 410, body: Self.png))
        server.route("/r1", .redirect(to: "/r2"))
        server.route("/r2", .redirect(to: "/r3"))
        server.route("/r3", .respond(body: Self.png))
        var configuration = HTTPImageLoader.Configuration()
        configuration.acceptableStatusCodes = [200, 410]
        configuration.maximumRedirects = 1
        let loader = HTTPImageLoader(configuration: configuration)
        #expect(try await loader.data(for: ImageLoaderRequest(url: server.url("/gone.png"))).0 == Self.png, "410 was made acceptable")
        do {
            _ = try await loader.data(for: ImageLoaderRequest(url: server.url("/r1")))
            Issue.record("two redirects passed a limit of one")
        } catch let error as ImageError {
            guard case .network(let url, _) = error else { Issue.record("\(error)"); return }
            #expect(url == server.url("/r1"))
        }
        configuration.maximumRedirects = 2
        configuration.acceptableStatusCodes = [200]
        let lenient = HTTPImageLoader(configuration: configuration)
        #expect(try await lenient.data(for: ImageLoaderRequest(url: server.url("/r1"))).0 == Self.png)
        await #expect(throws: ImageError.badStatusCode(410, url: server.url("/gone.png"))) {
            _ = try await lenient.data(for: ImageLoaderRequest(url: server.url("/gone.png")))
        }
        await server.stop()
    }

    @Test func theMemoryCacheTakesANewConfigurationAtOnce() async throws {
        let cache = MemoryCache(configuration: .init(costLimit: 1 << 30, countLimit: 0, usesWeakCache: false))
        let image = try Image(data: Self.png)
        for i in 0..<10 { cache.setImage(image, forKey: "k\(i)") }
        #expect(cache.count == 10)
        cache.setConfiguration(.init(costLimit: 1 << 30, countLimit: 4, usesWeakCache: false))
        #expect(cache.count == 4, "the count limit trims at once")
        let (newest, oldest) = (cache.contains("k9"), cache.contains("k0"))
        #expect(newest && !oldest, "least recently used go first")
        cache.setConfiguration(.init(costLimit: image.memoryCost * 2, countLimit: 0, maxEntryFraction: 1, usesWeakCache: false))
        #expect(cache.count == 2, "the cost limit trims at once")
    }

    @Test func codersCanBeAddedAndRemoved() throws {
        /// Decodes anything starting with "FAKE" as a 2x2 image.
        struct FakeCoder: ImageCoder {
            func canDecode(_ data: Data) -> Bool { data.starts(with: Array("FAKE".utf8)) }
            func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
                Image(bitmap: Bitmap(width: 2, height: 2))
            }
            func canEncode(_ format: ImageFormat) -> Bool { false }
            func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
                throw ImageError.encodingFailed(format, reason: "fake")
            }
        }
        let coders = ImageCoders()
        let fake = Data("FAKE data".utf8)
        #expect(throws: ImageError.self) { try coders.decode(fake) }
        coders.add(FakeCoder())
        #expect(try coders.decode(fake).width == 2)
        #expect(try coders.decode(Self.png).width == 64, "the built-ins still work")
        coders.remove { $0 is FakeCoder }
        #expect(throws: ImageError.self) { try coders.decode(fake) }
        coders.remove { $0 is PNGCoder }
        #expect(throws: ImageError.self) { try coders.decode(Self.png) }
    }

    @Test func aPipelineTransformerAppliesItsPartsInOrder() throws {
        let image = Image(bitmap: Fixtures.gradient(width: 40, height: 20))
        let crop = CroppingTransformer(x: 0, y: 0, width: 10, height: 20)
        let flip = FlippingTransformer(horizontal: true, vertical: false)
        let cropThenFlip = try PipelineTransformer([crop, flip]).transform(image)
        let flipThenCrop = try PipelineTransformer([flip, crop]).transform(image)
        #expect(cropThenFlip.bitmap == (try flip.transform(crop.transform(image))).bitmap)
        #expect(flipThenCrop.bitmap == (try crop.transform(flip.transform(image))).bitmap)
        #expect(cropThenFlip.bitmap != flipThenCrop.bitmap, "order matters for these two")
        #expect(PipelineTransformer([crop, flip]).key == crop.key + "-" + flip.key)
        #expect(try PipelineTransformer([]).transform(image).bitmap == image.bitmap)
    }

    @Test func thePreviewIntervalThrottlesPreviews() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.progressiveJPEG
        h.server.route("/p.jpg", .drip(body: body, chunk: max(1, body.count / 40), interval: .milliseconds(15)))
        func previews(_ interval: Duration, _ tag: String) async throws -> Int {
            var context = ImageContext()
            context.previewInterval = interval
            var scans: [Int] = []
            for try await event in h.manager.events(for: h.url("/p.jpg?\(tag)"), options: [.progressiveLoad, .fromLoaderOnly], context: context) {
                if case .preview(let preview) = event { scans.append(preview.scans) }
            }
            // Each preview shows a scan the last one did not (a progressive JPEG has about ten).
            #expect(scans == scans.sorted() && Set(scans).count == scans.count, "\(scans)")
            return scans.count
        }
        let everyChunk = try await previews(.zero, "a")
        let throttled = try await previews(.milliseconds(250), "b")
        #expect(everyChunk >= 5, "\(everyChunk) previews with no interval")
        #expect(everyChunk > throttled)
        #expect(throttled >= 1 && throttled <= 4, "\(throttled) previews over about 0.6 s with a 250 ms interval")
        await h.finish()
    }

    @Test func anExplicitScaleFactorIsGivenToTheImage() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: Self.png))
        var context = ImageContext()
        context.imageScaleFactor = 3
        let scaled = try await h.manager.image(for: h.url("/a.png"), context: context)
        #expect(scaled.scale == 3 && scaled.width == 64)
        h.server.route("/b.png", .respond(body: Self.png))
        #expect(try await h.manager.image(for: h.url("/b.png")).scale == 1)
        await h.finish()
    }
}

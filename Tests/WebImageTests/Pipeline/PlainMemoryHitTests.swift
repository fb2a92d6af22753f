import Foundation
import Testing
@testable import WebImage

/// The plain memory hit (`PlainCalls`): a call with no options and no context of its own is
/// answered from memory before a request is built, off a template request of the manager's
/// defaults; it must answer exactly what the whole path answers, and step aside whenever the
/// defaults make a hit anything else.
@Suite(.serialized) struct PlainMemoryHitTests {
    static let image = Image(bitmap: Fixtures.gradient(width: 4, height: 4))

    /// Whether the one decision answers a call from memory.
    static func isHit(_ manager: ImageManager, _ url: URL, options: ImageOptions = [], context: ImageContext = .init()) -> Bool {
        if case .hit? = try? manager.decide(url, options: options, context: context, onEvent: { nil }, runsHooks: true) { true } else { false }
    }

    /// The list the walk below takes is every option once: one bit each, no two alike, and no
    /// bit between them left out.
    @Test func theOptionListHoldsEveryOptionOnce() {
        let union = ImageOptions.every.reduce(into: ImageOptions()) { $0.formUnion($1) }
        #expect(ImageOptions.every.allSatisfy { $0.rawValue.nonzeroBitCount == 1 })
        #expect(union.rawValue.nonzeroBitCount == ImageOptions.every.count)
        #expect(union.rawValue == (1 << ImageOptions.every.count) - 1)
        #expect(ImageOptions.every == ImageOptions.every.sorted { $0.rawValue < $1.rawValue })
    }

    /// Every option, as the manager's default (a plain call, answered off the template) and as
    /// the call's own (the whole path with a request of its own), gives the same answer from
    /// memory: which options change a hit is read off the request, never listed by hand.
    @Test(arguments: ImageOptions.every)
    func everyOptionGivesThePlainCallTheWholePathsAnswer(_ option: ImageOptions) async throws {
        var configuration = ImageManager.Configuration()
        configuration.defaultOptions = option
        let defaulted = try await ManagerHarness(configuration: configuration)
        let plain = try await ManagerHarness()
        for h in [defaulted, plain] {
            h.server.route("/a.gif", .respond(contentType: "image/gif", body: ManagerHarness.gif))
            h.cache.memory.setImage(try ImageCoders.shared.decode(ManagerHarness.gif), forKey: h.url("/a.gif").absoluteString)
        }
        let viaTemplate = try await defaulted.manager.result(for: defaulted.url("/a.gif"), options: .waitStoreCache.intersection(option))
        let viaRequest = try await plain.manager.result(for: plain.url("/a.gif"), options: option)
        // (A caller that made a work but waits only after its delivery is given the late
        // callers' result, labelled a memory hit: the source is compared through the decision.)
        #expect((viaTemplate.cacheType == .disk) == (viaRequest.cacheType == .disk), "\(option)")
        #expect(viaTemplate.image.isAnimated == viaRequest.image.isAnimated, "\(option)")
        #expect((viaTemplate.data == nil) == (viaRequest.data == nil), "\(option)")
        #expect(Self.isHit(defaulted.manager, defaulted.url("/a.gif")) == Self.isHit(plain.manager, plain.url("/a.gif"), options: option),
                "\(option)")
        await defaulted.finish()
        await plain.finish()
    }

    @Test func aPlainCallOnAPlainManagerTakesTheFastPath() async throws {
        let h = try await ManagerHarness()
        #expect(h.manager.plain?.hitsByURL == true)
        let url = h.url("/never-served.png")
        h.cache.memory.setImage(Self.image, forKey: url.absoluteString)
        #expect(Self.isHit(h.manager, url))
        let result = try await h.manager.result(for: url)
        #expect(result.cacheType == .memory && result.url == url && result.data == nil)
        #expect(try await h.manager.image(for: url).bitmap == Self.image.bitmap)
        #expect(h.server.requestCount("/never-served.png") == 0)
        // Options that skip memory or want its data from disk are not answered at once.
        for option in [ImageOptions.fromLoaderOnly, .refreshCached, .queryMemoryData] {
            #expect(!Self.isHit(h.manager, url, options: option), "\(option)")
        }
        #expect(Self.isHit(h.manager, url, options: .highPriority))
        #expect(Self.isHit(h.manager, url, options: .retryFailed))
        await h.finish()
    }

    @Test func defaultsThatChangeTheKeyTurnItOff() async throws {
        var transformed = ImageManager.Configuration()
        transformed.transformer = FlippingTransformer(horizontal: true, vertical: false)
        var thumbnail = ImageManager.Configuration()
        thumbnail.defaultContext = ImageContext(thumbnailPixelSize: PixelSize(width: 8, height: 8))
        var processed = ImageManager.Configuration()
        processed.optionsProcessor = { url, options, context in (options, context) }
        var memoryOff = ImageManager.Configuration()
        memoryOff.defaultContext.queryCacheType = .disk
        var reshaping = ImageManager.Configuration()
        reshaping.defaultOptions = .refreshCached
        for configuration in [transformed, thumbnail, processed, memoryOff, reshaping] {
            let h = try await ManagerHarness(configuration: configuration)
            #expect(h.manager.plain?.hitsByURL != true)
            await h.finish()
        }
        // A manager whose cache is not the library's own asks it the whole way.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let base = ImageCache(namespace: "plain-hit", directory: directory.url, config: .init(cleanupInterval: nil))
        #expect(ImageManager(cache: InstrumentedCache(base: base)).plain?.hitsByURL == false)
    }

    /// A transformed manager never answers with the untransformed image stored under the URL.
    @Test func aTransformedManagerDoesNotReturnThePlainEntry() async throws {
        var configuration = ImageManager.Configuration()
        configuration.transformer = FlippingTransformer(horizontal: true, vertical: false)
        let h = try await ManagerHarness(configuration: configuration)
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let url = h.url("/a.png")
        h.cache.memory.setImage(Self.image, forKey: url.absoluteString)
        #expect(try await h.manager.image(for: url).width == 64, "the transformed load, not the 4x4 plain entry")
        await h.finish()
    }

    @Test func aCallWithAContextOfItsOwnAsksItsOwnCache() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let url = h.url("/a.png")
        h.cache.memory.setImage(Self.image, forKey: url.absoluteString)
        let other = ImageCache(namespace: "other", directory: h.directory.url.appendingPathComponent("other"), config: .init(cleanupInterval: nil))
        let image = try await h.manager.image(for: url, context: ImageContext(cache: other))
        #expect(image.width == 64, "the context's cache missed: the image was loaded")
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    @Test func theWholePathsChecksStillHold() async throws {
        let h = try await ManagerHarness()
        let url = h.url("/a.png")
        h.cache.memory.setImage(Self.image, forKey: url.absoluteString)
        // Cancelled before the call: CancellationError, as the whole path throws, not the hit.
        let cancelled = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await h.manager.image(for: url)
        }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        // A blacklisted URL fails even when its image is in memory (SDWebImage checks the blacklist first).
        h.manager.failedURLs.insert(url)
        await #expect(throws: ImageError.blacklistedURL(url)) { try await h.manager.image(for: url) }
        #expect(try await h.manager.image(for: url, options: .retryFailed).bitmap == Self.image.bitmap)
        #expect(!(await h.manager.isFailedURL(url)), "a hit with .retryFailed takes the URL off the list")
        // A URL with no scheme is invalid on both paths.
        let relative = try #require(URL(string: "a.png"))
        h.cache.memory.setImage(Self.image, forKey: relative.absoluteString)
        await #expect(throws: ImageError.invalidURL("a.png")) { try await h.manager.image(for: relative) }
        await h.finish()
    }

    @Test func aSchemeIsALetterThenSchemeCharactersThenAColon() {
        for yes in ["http://a", "HTTPS://a", "data:image/png;base64,AA", "file:///tmp/a.png", "a+b-c.d:x", "x:",
                    "https://images.example.com/a/long/path/that/is/not/a/small/string.png"] {
            #expect(URLScheme.isPresent(in: yes), "\(yes)")
        }
        for no in ["", "a.png", "/tmp/a.png", "1http://a", "://a", "ht tp://a", "-a:b", "%68ttp://a", "a/b:c",
                   "images.example.com/a/long/path/that/is/not/a/small/string.png",
                   // Bytes next to the letter and digit ranges, and non-ASCII ones.
                   "@a:b", "a@:b", "[a:b", "a[:b", "`a:b", "a`:b", "{a:b", "a{:b", "a/:b", "a;:b", "é:x", "aé:x"] {
            #expect(!URLScheme.isPresent(in: no), "\(no)")
        }
    }
}

extension PlainMemoryHitTests {
    /// Context fields, as the manager's default context (plain calls, answered off the template)
    /// and as the call's own context (the whole path), give the same answer from memory.
    @Test(arguments: [
        "thumbnail", "fill", "aspect", "scale", "scaleDown", "pixelLimit", "colorSpace", "queryDisk", "storeDisk",
        "originalQuery", "keyFilter", "noTransformer", "httpPolicy", "dataPolicy", "encoding", "transformer",
    ])
    func everyContextFieldGivesThePlainCallTheWholePathsAnswer(_ field: String) async throws {
        var context = ImageContext()
        switch field {
        case "thumbnail": context.thumbnailPixelSize = PixelSize(width: 16, height: 16)
        case "fill": context.fillPixelSize = PixelSize(width: 16, height: 0)
        case "aspect": context.preserveAspectRatio = false
        case "scale": context.imageScaleFactor = 2
        case "scaleDown": context.scaleDownLimitBytes = 1 << 20
        case "pixelLimit": context.decodePixelLimit = 1 << 20
        case "colorSpace": context.colorSpace = .original
        case "queryDisk": context.queryCacheType = .disk
        case "storeDisk": context.storeCacheType = .disk
        case "originalQuery": context.originalQueryCacheType = ImageCacheType.none
        case "keyFilter": context.cacheKeyFilter = CacheKeyFilter { $0.absoluteString + "#k" }
        case "noTransformer": context.usesTransformer = false
        case "httpPolicy": context.httpCachePolicy = .ignoreHeaders
        case "dataPolicy": context.dataCachePolicy = .storeOriginalData
        case "encoding": context.cacheEncoding = CacheEncoding(format: .png)
        default: context.transformer = FlippingTransformer(horizontal: true, vertical: false)
        }
        var configuration = ImageManager.Configuration()
        configuration.defaultContext = context
        let defaulted = try await ManagerHarness(configuration: configuration)
        let plain = try await ManagerHarness()
        for h in [defaulted, plain] {
            h.server.route("/a.png", .respond(body: ManagerHarness.png))
            h.cache.memory.setImage(Self.image, forKey: h.url("/a.png").absoluteString)
        }
        let viaTemplate = try await defaulted.manager.result(for: defaulted.url("/a.png"))
        let viaRequest = try await plain.manager.result(for: plain.url("/a.png"), context: context)
        #expect(viaTemplate.cacheType == viaRequest.cacheType, "\(field)")
        #expect(viaTemplate.image.width == viaRequest.image.width, "\(field)")
        await defaulted.finish()
        await plain.finish()
    }
}

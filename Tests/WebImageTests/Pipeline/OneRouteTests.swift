import Foundation
import Synchronization
import Testing
@testable import WebImage
import WebImageMemcached

/// The one route: every entry point through one decision and one bookkeeping, plug-ins on the
/// same path as the built-ins, the call's context reaching them, a call switching off the
/// manager's transformer, and the synchronous memory look-up.
@Suite(.serialized) struct OneRouteTests {
    /// A custom context value, for plug-ins to read.
    enum Tenant: ImageContextKey { typealias Value = String }

    /// What the plug-ins below saw of the context.
    final class Seen: Sendable {
        let values = Mutex<[String]>([])
        func record(_ where: String, _ context: ImageContext) { values.withLock { $0.append("\(`where`)=\(context[Tenant.self] ?? "-")") } }
        var all: [String] { values.withLock { $0 } }
    }

    /// A loader of the program's own that serves a PNG for `mem:` URLs and records the context.
    struct ContextLoader: ImageLoader {
        let seen: Seen
        func canLoad(_ url: URL) -> Bool { url.scheme == "mem" }
        func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
            seen.record("loader", request.context)
            return AsyncThrowingStream { continuation in
                continuation.yield(.response(ImageLoaderResponse(statusCode: 200, headers: [:], expectedContentLength: nil, url: request.url)))
                continuation.yield(.data(ManagerHarness.png))
                continuation.finish()
            }
        }
        func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) {
            seen.record("loader", request.context)
            return (ManagerHarness.png, ImageLoaderResponse(statusCode: 200, headers: [:], expectedContentLength: nil, url: request.url))
        }
    }

    /// A coder of the program's own (PNG through the built-in one) that records the context.
    struct ContextCoder: ImageCoder {
        let seen: Seen
        func canDecode(_ data: Data) -> Bool { PNGCoder().canDecode(data) }
        func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image { try PNGCoder().decode(data, options: options) }
        func decode(_ data: Data, options: ImageDecodingOptions, context: ImageContext) throws -> Image {
            seen.record("coder", context)
            return try decode(data, options: options)
        }
        func canEncode(_ format: ImageFormat) -> Bool { false }
        func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
            throw ImageError.encodingFailed(format, reason: "not here")
        }
    }

    /// A cache of the program's own over `ImageCache` that records the context of its queries
    /// and stores and declares what it is told.
    final class ContextCache: ImageCaching {
        let base: ImageCache
        let seen: Seen
        let declared: ImageCacheCapabilities
        init(base: ImageCache, seen: Seen, declared: ImageCacheCapabilities) {
            self.base = base
            self.seen = seen
            self.declared = declared
        }
        func image(forKey key: String, query: ImageCacheQuery) async -> ImageCacheResult? {
            seen.record("query", query.context)
            return await base.image(forKey: key, query: query)
        }
        func store(_ image: Image?, data: Data?, extendedData: Data?, forKey key: String, to destination: ImageCacheType,
                   context: ImageContext) async throws {
            seen.record("store", context)
            try await base.store(image, data: data, extendedData: extendedData, forKey: key, to: destination, context: context)
        }
        func removeImage(forKey key: String, from scope: ImageCacheType) async { await base.removeImage(forKey: key, from: scope) }
        func containsImage(forKey key: String, in scope: ImageCacheType) async -> ImageCacheType { await base.containsImage(forKey: key, in: scope) }
        func clear(_ scope: ImageCacheType) async { await base.clear(scope) }
        var capabilities: ImageCacheCapabilities { declared }
        func cachedImage(forKey key: String) -> Image? { declared.contains(.synchronousMemory) ? base.cachedImage(forKey: key) : nil }
        func storeInMemoryNow(_ image: Image, forKey key: String) -> Bool {
            declared.contains(.synchronousMemory) && base.storeInMemoryNow(image, forKey: key)
        }
    }

    @Test func theCallsContextReachesTheLoaderTheCacheAndTheCoder() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let seen = Seen()
        let cache = ContextCache(base: ImageCache(namespace: "t", directory: directory.url, config: .init(cleanupInterval: nil)),
                                 seen: seen, declared: [])
        let coders = ImageCoders([ContextCoder(seen: seen)])
        let manager = ImageManager(cache: cache, loaders: ImageLoaders([ContextLoader(seen: seen)]), coders: coders)
        var context = ImageContext()
        context[Tenant.self] = "acme"
        _ = try await manager.image(for: URL(string: "mem:/a.png")!, options: .waitStoreCache, context: context)
        let all = seen.all
        for stage in ["query", "loader", "coder", "store"] {
            #expect(all.contains("\(stage)=acme"), "\(stage) did not see the call's context: \(all)")
        }
        #expect(!all.contains { $0.hasSuffix("=-") }, "a plug-in saw an empty context: \(all)")
    }

    @Test func aCallSwitchesOffTheManagersTransformer() async throws {
        var configuration = ImageManager.Configuration()
        configuration.transformer = ResizingTransformer(width: 8, height: 8, scaleMode: .fill)
        let h = try await ManagerHarness(configuration: configuration)
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let url = h.url("/a.png")
        #expect(try await h.manager.image(for: url).width == 8)
        var off = ImageContext()
        off.usesTransformer = false
        #expect(try await h.manager.image(for: url, context: off).width == 64, "the call's image is untransformed")
        #expect(h.manager.cacheKey(for: url, context: off) == url.absoluteString, "and cached under the plain key")
        #expect(h.manager.cacheKey(for: url) != url.absoluteString)
        await h.finish()
    }

    @Test func theSynchronousMemoryLookUpNeverTouchesDiskOrNetwork() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let url = h.url("/a.png")
        #expect(h.manager.cachedImage(for: url) == nil)
        try await h.cache.store(nil, data: ManagerHarness.png, forKey: url.absoluteString, to: .disk)
        #expect(h.manager.cachedImage(for: url) == nil, "on disk only: not answered")
        #expect(h.cache.cachedImage(forKey: url.absoluteString) == nil)
        _ = try await h.manager.image(for: url)   // the disk hit goes into memory
        #expect(h.manager.cachedImage(for: url)?.width == 64)
        #expect(h.cache.cachedImage(forKey: url.absoluteString)?.width == 64)
        #expect(h.manager.cachedImage(for: url, options: .fromLoaderOnly) == nil, "a call that skips memory gets nothing")
        var thumbnail = ImageContext()
        thumbnail.thumbnailPixelSize = PixelSize(width: 16, height: 16)
        #expect(h.manager.cachedImage(for: url, context: thumbnail) == nil, "the thumbnail's key is another")
        #expect(h.server.requestCount("/a.png") == 0)
        await h.finish()
    }

    /// `data(for:)` keeps the deadline, the lifecycle events and the failed-URL list as the image calls do.
    @Test(.timeLimit(.minutes(1))) func dataCallsAreBoundedAndTold() async throws {
        let h = try await ManagerHarness()
        h.server.route("/slow.png", .delayed(.seconds(2), .respond(body: ManagerHarness.png)))
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let events = h.manager.lifecycleEvents()
        var bounded = ImageContext()
        bounded.loadTimeout = .milliseconds(150)
        let start = ContinuousClock.now
        await #expect(throws: ImageError.timedOut(url: h.url("/slow.png"))) { _ = try await h.manager.data(for: h.url("/slow.png"), context: bounded) }
        #expect(ContinuousClock.now - start < .seconds(1), "the deadline ended the data call")
        _ = try await h.manager.data(for: h.url("/a.png"))
        var seen: [String] = []
        for await event in events {
            seen.append(LifecycleEventsTests.describe(event))
            if seen.last == "finished a.png none" { break }
        }
        #expect(seen.contains("failed slow.png true"), "\(seen)")
        #expect(seen.contains("load a.png") && seen.contains("finished a.png none"), "\(seen)")
        await h.finish()
    }

    /// The lifecycle events of a load, a plain memory hit and a memory hit with options of its
    /// own, through `manager`.
    func eventsOfThreeCalls(_ manager: ImageManager, _ url: URL) async throws -> [String] {
        let events = manager.lifecycleEvents()
        _ = try await manager.image(for: url)
        _ = try await manager.image(for: url)
        _ = try await manager.result(for: url, options: .highPriority)
        return await LifecycleEventsTests.take(6, from: events)
    }

    /// A custom loader, a custom cache declaring synchronous memory, and the memcached tier's
    /// cache take the same path as the built-ins: the same decisions, events and answers.
    @Test func plugInsTakeTheBuiltInsPath() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        func fresh(_ name: String) -> ImageCache {
            ImageCache(namespace: name, directory: directory.url.appendingPathComponent(name), config: .init(cleanupInterval: nil))
        }
        let seen = Seen()
        let loaders = ImageLoaders([ContextLoader(seen: seen)])
        let url = URL(string: "mem:/a.png")!
        let builtIn = try await eventsOfThreeCalls(ImageManager(cache: fresh("a"), loaders: loaders), url)
        let custom = ContextCache(base: fresh("b"), seen: seen, declared: .synchronousMemory)
        let plugIn = try await eventsOfThreeCalls(ImageManager(cache: custom, loaders: loaders), url)
        let nodes = try MemcachedNodes(count: 1)
        defer { nodes.stop() }
        let tier = TieredImageCache(base: fresh("c"), tier: try SharedCacheTier(.init(servers: nodes.servers)))
        let tiered = try await eventsOfThreeCalls(ImageManager(cache: tier, loaders: loaders), url)
        #expect(builtIn.filter { $0.hasPrefix("finished") }.count == 3, "\(builtIn)")
        #expect(plugIn == builtIn)
        #expect(tiered == builtIn)
        // Each answers a memory hit at once, in the caller's decision.
        for cache in [custom, tier] as [any ImageCaching] {
            let manager = ImageManager(cache: cache, loaders: loaders)
            _ = try await manager.image(for: url)
            #expect(PlainMemoryHitTests.isHit(manager, url), "\(type(of: cache))")
            #expect(manager.plain?.hitsByURL == true)
        }
    }
}

import Foundation
import Synchronization
import Testing
@testable import WebImage

/// A date source a test moves by hand (`ImageManager.Configuration.currentDate`).
final class MovableDate: Sendable {
    private let value = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
    var now: Date { value.withLock { $0 } }
    func advance(by seconds: Double) { value.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var source: @Sendable () -> Date { { self.now } }
}

/// `HTTPCachePolicy.respectHeaders` (the default) against the in-process server, with a clock
/// the test moves: each directive decides whether a disk entry is used, revalidated or stored.
@Suite(.timeLimit(.minutes(2))) struct HTTPCachePolicyTests {
    /// A harness whose manager reckons freshness by `clock`, with the policy of `policy` (nil: the default).
    static func harness(_ clock: MovableDate, policy: HTTPCachePolicy? = nil,
                        loaderConfiguration: HTTPImageLoader.Configuration = .init()) async throws -> ManagerHarness {
        var configuration = ImageManager.Configuration()
        configuration.currentDate = clock.source
        configuration.rateLimiter = nil
        configuration.defaultContext.httpCachePolicy = policy
        return try await ManagerHarness(loaderConfiguration: loaderConfiguration, configuration: configuration)
    }

    /// Loads `path` once more from the disk's point of view (memory emptied first), waiting for its stores.
    static func load(_ h: ManagerHarness, _ path: String, options: ImageOptions = []) async throws -> ImageResult {
        await h.cache.clear(.memory)
        let result = try await h.manager.result(for: h.url(path), options: options.union(.waitStoreCache))
        await h.manager.waitForPendingStores()
        return result
    }

    /// The entry files in the cache's folder (hidden temporary and side files left out).
    static func entries(_ h: ManagerHarness) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: h.cache.diskCache!.directory.path)) ?? []).filter { !$0.hasPrefix(".") }
    }

    static let other = try! Image(bitmap: Fixtures.gradient(width: 20, height: 10)).encoded(as: .png)

    @Test func aFreshEntryIsServedWithoutARequest() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        h.server.route("/a.png", .headers([("cache-control", "max-age=60")], then: .etag("\"v1\"", body: ManagerHarness.png)))
        #expect(try await Self.load(h, "/a.png").cacheType == .none)
        clock.advance(by: 59)
        #expect(try await Self.load(h, "/a.png").cacheType == .disk)
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    @Test func aStaleEntryIsRevalidatedAnd304KeepsTheBodyAndRefreshesTheFreshness() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        h.server.route("/a.png", .headers([("cache-control", "max-age=60")], then: .etag("\"v1\"", body: ManagerHarness.png)))
        _ = try await Self.load(h, "/a.png")
        clock.advance(by: 61)
        let revalidated = try await Self.load(h, "/a.png")
        #expect(revalidated.cacheType == .disk, "304: the cached body")
        #expect(h.server.requestCount("/a.png") == 2)
        let sent = Dictionary(h.server.headers(of: "/a.png").map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(sent["if-none-match"] == "\"v1\"", "the stored validator was sent")
        // The 304 (with its max-age) made the entry fresh again from now.
        clock.advance(by: 59)
        #expect(try await Self.load(h, "/a.png").cacheType == .disk)
        #expect(h.server.requestCount("/a.png") == 2)
        await h.finish()
    }

    @Test func aStaleEntryAnswered200IsReplaced() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        h.server.route("/a.png", .sequence([
            .headers([("cache-control", "max-age=60")], then: .etag("\"v1\"", body: ManagerHarness.png)),
            .headers([("cache-control", "max-age=60")], then: .etag("\"v2\"", body: Self.other)),
        ]))
        #expect(try await Self.load(h, "/a.png").image.width == 64)
        clock.advance(by: 61)
        let replaced = try await Self.load(h, "/a.png")
        #expect(replaced.image.width == 20 && replaced.cacheType == .none)
        #expect(await h.cache.disk.data(forKey: h.url("/a.png").absoluteString) == Self.other)
        clock.advance(by: 10)
        #expect(try await Self.load(h, "/a.png").image.width == 20)
        #expect(h.server.requestCount("/a.png") == 2)
        await h.finish()
    }

    @Test func noStoreIsNeverWrittenToDisk() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        h.server.route("/private.png", .headers([("cache-control", "private, no-store")], then: .respond(body: ManagerHarness.png)))
        h.server.route("/thumb.png", .headers([("cache-control", "no-store")], then: .respond(body: ManagerHarness.png)))
        let result = try await h.manager.result(for: h.url("/private.png"), options: .waitStoreCache)
        #expect(result.image.width == 64)
        var thumbnail = ImageContext()
        thumbnail.thumbnailPixelSize = PixelSize(width: 16, height: 16)
        _ = try await h.manager.result(for: h.url("/thumb.png"), options: .waitStoreCache, context: thumbnail)
        await h.manager.waitForPendingStores()
        #expect(Self.entries(h).isEmpty, "the folder holds \(Self.entries(h))")
        // Nor in memory: no cache keeps it (the caller holds its image).
        #expect(h.cache.cachedImage(forKey: h.url("/private.png").absoluteString) == nil)
        #expect(result.freshness?.noStore == true)
        #expect(try await Self.load(h, "/private.png").cacheType == .none)
        #expect(h.server.requestCount("/private.png") == 2)
        await h.finish()
    }

    @Test func ignoreHeadersKeepsTodaysBehaviour() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock, policy: .ignoreHeaders)
        h.server.route("/a.png", .headers([("cache-control", "no-store, max-age=0")], then: .respond(body: ManagerHarness.png)))
        _ = try await Self.load(h, "/a.png")
        #expect(Self.entries(h).count == 1, "written despite no-store")
        clock.advance(by: 3600)
        #expect(try await Self.load(h, "/a.png").cacheType == .disk)
        #expect(h.server.requestCount("/a.png") == 1)
        // A call can ask for the headers to be followed.
        var context = ImageContext()
        context.httpCachePolicy = .respectHeaders
        await h.cache.clear(.memory)
        _ = try await h.manager.result(for: h.url("/a.png"), context: context)
        #expect(h.server.requestCount("/a.png") == 2, "max-age=0: revalidated")
        await h.finish()
    }

    @Test func noCacheRevalidatesEveryUse() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        h.server.route("/a.png", .headers([("cache-control", "no-cache, max-age=3600")], then: .etag("\"v1\"", body: ManagerHarness.png)))
        _ = try await Self.load(h, "/a.png")
        for round in 2...4 {
            #expect(try await Self.load(h, "/a.png").cacheType == .disk)
            #expect(h.server.requestCount("/a.png") == round)
        }
        await h.finish()
    }

    @Test func mustRevalidateIgnoresStaleWhileRevalidate() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        h.server.route("/a.png", .sequence([
            .headers([("cache-control", "max-age=10, stale-while-revalidate=600, must-revalidate")], then: .etag("\"v1\"", body: ManagerHarness.png)),
            .headers([("cache-control", "max-age=10")], then: .etag("\"v2\"", body: Self.other)),
        ]))
        _ = try await Self.load(h, "/a.png")
        clock.advance(by: 30)
        #expect(try await Self.load(h, "/a.png").image.width == 20, "revalidated before use: the new image")
        await h.finish()
    }

    @Test func staleWhileRevalidateAnswersAtOnceWithOneBackgroundRequest() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        // The revalidation is slow: every caller must have its answer before it ends.
        h.server.route("/a.png", .sequence([
            .headers([("cache-control", "max-age=10, stale-while-revalidate=600")], then: .etag("\"v1\"", body: ManagerHarness.png)),
            .delayed(.milliseconds(300), .headers([("cache-control", "max-age=10, stale-while-revalidate=600")],
                                                  then: .etag("\"v2\"", body: Self.other))),
        ]))
        _ = try await Self.load(h, "/a.png")
        await h.cache.clear(.memory)
        clock.advance(by: 30)
        let key = h.url("/a.png").absoluteString
        let results = try await withThrowingTaskGroup(of: ImageResult.self) { group in
            for _ in 0..<100 { group.addTask { try await h.manager.result(for: h.url("/a.png")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 100 && results.allSatisfy { $0.image.width == 64 }, "the stale image at once")
        #expect(h.server.requestCount("/a.png") <= 2)
        try await waitUntil(h.server.requestCount("/a.png") == 2 && h.manager.pipeline.revalidating.count == 0)
        await h.manager.waitForPendingStores()
        #expect(h.server.requestCount("/a.png") == 2, "one background request for 100 callers")
        #expect(await h.cache.disk.data(forKey: key) == Self.other, "the revalidation stored the new image")
        #expect(try await h.manager.image(for: h.url("/a.png")).width == 20, "and put it in memory")
        await h.finish()
    }

    @Test func varyAcceptKeepsOneVariantPerRequestHeaders() async throws {
        let clock = MovableDate()
        var webp = HTTPImageLoader.Configuration()
        webp.headers["Accept"] = "image/webp"
        let h = try await Self.harness(clock, loaderConfiguration: webp)
        h.server.route("/v.png", .headers([("cache-control", "max-age=600"), ("vary", "Accept")], then: .respond(body: ManagerHarness.png)))
        h.server.route("/star.png", .headers([("cache-control", "max-age=600"), ("vary", "*")], then: .respond(body: ManagerHarness.png)))
        _ = try await Self.load(h, "/v.png")
        #expect(try await Self.load(h, "/v.png").cacheType == .disk, "the same Accept: the stored variant")
        #expect(h.server.requestCount("/v.png") == 1)
        // Another manager over the same cache whose loader sends another Accept.
        var png = HTTPImageLoader.Configuration()
        png.headers["accept"] = "image/png"
        var configuration = ImageManager.Configuration()
        configuration.currentDate = clock.source
        let other = ImageManager(cache: h.cache, loaders: ImageLoaders([HTTPImageLoader(configuration: png)]), configuration: configuration)
        await h.cache.clear(.memory)
        #expect(try await other.result(for: h.url("/v.png"), options: .waitStoreCache).cacheType == .none, "another variant: asked")
        #expect(h.server.requestCount("/v.png") == 2)
        // A request modifier could change the headers: a Vary response is then not stored.
        var modified = ImageContext()
        modified.requestModifier = { $0 }
        await h.cache.clear(.all)
        _ = try await h.manager.result(for: h.url("/v.png"), options: .waitStoreCache, context: modified)
        _ = try await Self.load(h, "/star.png")
        await h.manager.waitForPendingStores()
        #expect(Self.entries(h).isEmpty, "Vary with a request modifier, and Vary: *, are not stored")
        await h.finish()
    }

    @Test func memoryKeepsAnImageOnlyWhileItsResponseIsFresh() async throws {
        let h = try await Self.harness(MovableDate())
        h.server.route("/short.png", .headers([("cache-control", "max-age=1")], then: .respond(body: ManagerHarness.png)))
        h.server.route("/nocache.png", .headers([("cache-control", "no-cache")], then: .etag("\"n\"", body: ManagerHarness.png)))
        h.server.route("/plain.png", .respond(body: ManagerHarness.png))
        for path in ["/short.png", "/nocache.png", "/plain.png"] { _ = try await h.manager.result(for: h.url(path)) }
        #expect(h.cache.cachedImage(forKey: h.url("/short.png").absoluteString) != nil)
        #expect(h.cache.cachedImage(forKey: h.url("/nocache.png").absoluteString) == nil, "revalidated on every use: never in memory")
        try await Task.sleep(for: .milliseconds(1100))
        #expect(h.cache.cachedImage(forKey: h.url("/short.png").absoluteString) == nil, "gone from memory once stale")
        #expect(h.cache.cachedImage(forKey: h.url("/plain.png").absoluteString) != nil, "no freshness said: kept")
        await h.finish()
    }

    @Test func resultsCarryTheirFreshness() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        h.server.route("/a.png", .headers([("cache-control", "max-age=60")], then: .etag("\"v1\"", body: ManagerHarness.png)))
        let fetched = try await Self.load(h, "/a.png")
        #expect(fetched.freshness?.lifetime == 60)
        #expect(fetched.freshness?.cacheControl(cappedAt: 3600, now: clock.now) == "public, max-age=60")
        #expect(fetched.freshness?.cacheControl(cappedAt: 10, now: clock.now) == "public, max-age=10")
        clock.advance(by: 20)
        let hit = try await Self.load(h, "/a.png")
        #expect(hit.cacheType == .disk && hit.freshness?.lifetime == 40)
        clock.advance(by: 50)
        let revalidated = try await Self.load(h, "/a.png")
        #expect(revalidated.freshness?.lifetime == 60, "refreshed by the 304")
        #expect(HTTPFreshness(date: clock.now, lifetime: nil).cacheControl(cappedAt: 5) == "public, max-age=5")
        #expect(HTTPFreshness(date: clock.now, lifetime: 9, noCache: true).cacheControl(cappedAt: 5) == "no-cache")
        await h.finish()
    }

    @Test func malformedHeadersAreReadSafely() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        let cases: [(String, [(String, String)], Bool)] = [
            ("/negative.png", [("cache-control", "max-age=-5")], false),
            ("/quoted.png", [("cache-control", "max-age=\"600\"")], true),
            ("/huge.png", [("cache-control", "max-age=99999999999999999999999999")], true),
            ("/twice.png", [("cache-control", "max-age=600"), ("cache-control", "max-age=1")], false),
            ("/garbage.png", [("cache-control", "max-age=600;;;==\"\"\"")], false),
            ("/expires.png", [("expires", "yesterday")], false),
            ("/date.png", [("cache-control", "max-age=600"), ("date", "not a date"), ("age", "-3")], true),
        ]
        for (path, headers, fresh) in cases {
            h.server.route(path, .headers(headers, then: .etag("\"t\"", body: ManagerHarness.png)))
            _ = try await Self.load(h, path)
            clock.advance(by: 5)
            #expect(try await Self.load(h, path).cacheType == .disk, "\(path)")
            #expect(h.server.requestCount(path) == (fresh ? 1 : 2), "\(path): fresh \(fresh)")
        }
        await h.finish()
    }

    @Test func dataCallsFollowTheSameRules() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        h.server.route("/d.png", .headers([("cache-control", "max-age=60")], then: .etag("\"v1\"", body: ManagerHarness.png)))
        h.server.route("/n.png", .headers([("cache-control", "no-store")], then: .respond(body: ManagerHarness.png)))
        _ = try await h.manager.data(for: h.url("/d.png"), options: .waitStoreCache)
        clock.advance(by: 30)
        _ = try await h.manager.data(for: h.url("/d.png"))
        #expect(h.server.requestCount("/d.png") == 1)
        clock.advance(by: 31)
        #expect(try await h.manager.data(for: h.url("/d.png"), options: .waitStoreCache) == ManagerHarness.png)
        #expect(h.server.requestCount("/d.png") == 2, "stale: revalidated (304)")
        clock.advance(by: 30)
        _ = try await h.manager.data(for: h.url("/d.png"))
        #expect(h.server.requestCount("/d.png") == 2, "the 304 refreshed it")
        _ = try await h.manager.data(for: h.url("/n.png"), options: .waitStoreCache)
        #expect(Self.entries(h).count == 1, "no-store bytes are not written")
        await h.finish()
    }

    @Test func aDataLoadRevalidatesItsBytesInTheBackgroundWithoutDecoding() async throws {
        let clock = MovableDate()
        var configuration = ImageManager.Configuration()
        configuration.currentDate = clock.source
        configuration.rateLimiter = nil
        let coder = CountingCoder()
        let h = try await ManagerHarness(configuration: configuration)
        let manager = ImageManager(cache: h.cache, loaders: ImageLoaders([h.loader]), coders: ImageCoders([coder]), configuration: configuration)
        h.server.route("/s.png", .sequence([
            .headers([("cache-control", "max-age=10, stale-while-revalidate=600")], then: .etag("\"v1\"", body: ManagerHarness.png)),
            .headers([("cache-control", "max-age=10, stale-while-revalidate=600")], then: .etag("\"v2\"", body: Self.other)),
        ]))
        _ = try await manager.data(for: h.url("/s.png"), options: .waitStoreCache)
        clock.advance(by: 30)
        #expect(try await manager.data(for: h.url("/s.png")) == ManagerHarness.png, "the stale bytes at once")
        try await waitUntil(h.server.requestCount("/s.png") == 2 && manager.pipeline.revalidating.count == 0)
        await manager.waitForPendingStores()
        #expect(await h.cache.disk.data(forKey: h.url("/s.png").absoluteString) == Self.other, "the new bytes stored")
        #expect(coder.decodes.load(ordering: .relaxed) == 0, "nothing decoded")
        #expect(h.cache.cachedImage(forKey: h.url("/s.png").absoluteString) == nil, "no image made: a data load's revalidation, not an image load's")
        await h.finish()
    }

    @Test func aThumbnailKeepsTheResponsesFreshness() async throws {
        let clock = MovableDate()
        let h = try await Self.harness(clock)
        h.server.route("/t.png", .headers([("cache-control", "max-age=60")], then: .etag("\"v1\"", body: ManagerHarness.png)))
        var thumbnail = ImageContext()
        thumbnail.thumbnailPixelSize = PixelSize(width: 16, height: 16)
        _ = try await h.manager.result(for: h.url("/t.png"), options: .waitStoreCache, context: thumbnail)
        await h.manager.waitForPendingStores()
        await h.cache.clear(.memory)
        clock.advance(by: 30)
        #expect(try await h.manager.result(for: h.url("/t.png"), context: thumbnail).cacheType == .disk)
        #expect(h.server.requestCount("/t.png") == 1)
        await h.cache.clear(.memory)
        clock.advance(by: 31)
        let revalidated = try await h.manager.result(for: h.url("/t.png"), options: .waitStoreCache, context: thumbnail)
        #expect(revalidated.cacheType == .disk && revalidated.image.width <= 16)
        #expect(h.server.requestCount("/t.png") == 2)
        await h.finish()
    }
}

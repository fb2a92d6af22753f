import Foundation
import Testing
@testable import WebImage

/// `HTTPCachePolicy.respectHeadersShared` (an image proxy's cache, RFC 9111 §3 and §5.2.2) and
/// the revalidation of a derived image's stale original, against the in-process server with a
/// clock the test moves.
@Suite(.timeLimit(.minutes(2))) struct SharedCachePolicyTests {
    typealias P = HTTPCachePolicyTests

    static var memoryOnlyThumbnail: ImageContext {
        var context = ImageContext()
        context.thumbnailPixelSize = PixelSize(width: 16, height: 16)
        context.storeCacheType = .memory   // the derived image in memory only, its original on disk
        return context
    }

    @Test func aDerivedImagesStaleOriginalIsRevalidatedAndA304MakesItFromTheDisk() async throws {
        let clock = MovableDate()
        let h = try await P.harness(clock)
        h.server.route("/o.png", .headers([("cache-control", "max-age=60"), ("last-modified", "Mon, 02 Nov 2026 10:00:00 GMT")],
                                          then: .etag("\"v1\"", body: ManagerHarness.png)))
        let context = Self.memoryOnlyThumbnail
        _ = try await h.manager.result(for: h.url("/o.png"), options: .waitStoreCache, context: context)
        await h.manager.waitForPendingStores()
        await h.cache.clear(.memory)
        clock.advance(by: 61)
        let revalidated = try await h.manager.result(for: h.url("/o.png"), options: .waitStoreCache, context: context)
        #expect(h.server.requestCount("/o.png") == 2)
        let sent = Dictionary(h.server.headers(of: "/o.png").map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(sent["if-none-match"] == "\"v1\"" && sent["if-modified-since"] != nil, "a conditional request: \(sent)")
        #expect(revalidated.cacheType == .disk && revalidated.image.width <= 16, "made from the original on disk")
        #expect(revalidated.freshness?.lifetime.map { $0 > 59 } == true, "the 304 refreshed the freshness")
        #expect(revalidated.freshness?.etag == "\"v1\"")
        // The original's entry was refreshed: fresh again, no request.
        await h.cache.clear(.memory)
        clock.advance(by: 30)
        _ = try await h.manager.result(for: h.url("/o.png"), context: context)
        #expect(h.server.requestCount("/o.png") == 2)
        await h.finish()
    }

    @Test func aDerivedImagesChangedOriginalIsDownloadedAgain() async throws {
        let clock = MovableDate()
        let h = try await P.harness(clock)
        h.server.route("/c.png", .sequence([.headers([("cache-control", "max-age=60")], then: .etag("\"v1\"", body: ManagerHarness.png)),
                                            .headers([("cache-control", "max-age=60")], then: .etag("\"v2\"", body: P.other))]))
        let context = Self.memoryOnlyThumbnail
        _ = try await h.manager.result(for: h.url("/c.png"), options: .waitStoreCache, context: context)
        await h.cache.clear(.memory)
        clock.advance(by: 61)
        let changed = try await h.manager.result(for: h.url("/c.png"), options: .waitStoreCache, context: context)
        #expect(changed.cacheType == .none && changed.freshness?.etag == "\"v2\"")
        #expect(changed.image.width == 16 && changed.image.height == 8, "the new source's thumbnail")
        await h.finish()
    }

    @Test func sMaxAgeAndProxyRevalidateCountForASharedCacheOnly() async throws {
        for policy in [HTTPCachePolicy.respectHeaders, .respectHeadersShared] {
            let clock = MovableDate()
            let h = try await P.harness(clock, policy: policy)
            h.server.route("/s.png", .headers([("cache-control", "max-age=10, s-maxage=100")], then: .etag("\"s\"", body: ManagerHarness.png)))
            h.server.route("/p.png", .headers([("cache-control", "max-age=10, stale-while-revalidate=100, proxy-revalidate")],
                                              then: .etag("\"p\"", body: ManagerHarness.png)))
            _ = try await P.load(h, "/s.png")
            _ = try await P.load(h, "/p.png")
            clock.advance(by: 50)
            let s = try await P.load(h, "/s.png")
            #expect(h.server.requestCount("/s.png") == (policy == .respectHeadersShared ? 1 : 2), "\(policy): s-maxage")
            if policy == .respectHeadersShared { #expect(s.freshness?.lifetime.map { $0 <= 50 && $0 > 49 } == true) }
            // A private cache serves it stale within the window (and revalidates in the
            // background); a shared one revalidates first: the result is the 304's, fresh.
            let p = try await P.load(h, "/p.png")
            #expect(((p.freshness?.lifetime ?? 0) > 0) == (policy == .respectHeadersShared), "\(policy): proxy-revalidate")
            try await waitUntil(h.server.requestCount("/p.png") == 2)
            await h.finish()
        }
    }

    @Test func aSharedCacheKeepsPrivateAndVaryStarResponsesNowhere() async throws {
        let clock = MovableDate()
        let h = try await P.harness(clock, policy: .respectHeadersShared)
        h.server.route("/private.png", .headers([("cache-control", "private, max-age=600")], then: .respond(body: ManagerHarness.png)))
        h.server.route("/star.png", .headers([("cache-control", "max-age=600"), ("vary", "*")], then: .respond(body: ManagerHarness.png)))
        let first = try await h.manager.result(for: h.url("/private.png"), options: .waitStoreCache)
        #expect(first.freshness?.isPrivate == true)
        #expect(first.freshness?.cacheControl(cappedAt: 60).hasPrefix("private, max-age=") == true)
        _ = try await h.manager.result(for: h.url("/private.png"), options: .waitStoreCache)
        _ = try await h.manager.result(for: h.url("/star.png"), options: .waitStoreCache)
        _ = try await h.manager.result(for: h.url("/star.png"), options: .waitStoreCache)
        #expect(h.server.requestCount("/private.png") == 2 && h.server.requestCount("/star.png") == 2, "neither memory nor disk kept them")
        #expect(await h.cache.containsImage(forKey: h.url("/private.png").absoluteString, in: .all) == ImageCacheType.none)
        // A private cache (the library's default) keeps a private response.
        let own = try await P.harness(clock)
        own.server.route("/private.png", .headers([("cache-control", "private, max-age=600")], then: .respond(body: ManagerHarness.png)))
        _ = try await own.manager.result(for: own.url("/private.png"), options: .waitStoreCache)
        _ = try await own.manager.result(for: own.url("/private.png"))
        #expect(own.server.requestCount("/private.png") == 1)
        await own.finish()
        await h.finish()
    }

    /// `.queryMemoryData` reads a memory hit's bytes from disk; with the memory empty it used to
    /// take the disk entry itself, stale or not, without the disk stage's freshness check.
    @Test func queryMemoryDataDoesNotServeAStaleDiskEntry() async throws {
        let clock = MovableDate()
        let h = try await P.harness(clock)
        h.server.route("/q.png", .headers([("cache-control", "max-age=60")], then: .etag("\"q\"", body: ManagerHarness.png)))
        _ = try await P.load(h, "/q.png")
        clock.advance(by: 61)
        await h.cache.clear(.memory)
        let result = try await h.manager.result(for: h.url("/q.png"), options: [.queryMemoryData, .waitStoreCache])
        #expect(h.server.requestCount("/q.png") == 2, "revalidated")
        #expect(result.data == ManagerHarness.png && result.freshness?.lifetime.map { $0 > 59 } == true)
        // A memory hit still brings its bytes from disk.
        let hit = try await h.manager.result(for: h.url("/q.png"), options: .queryMemoryData)
        #expect(hit.cacheType == .memory && hit.data == ManagerHarness.png)
        await h.finish()
    }

    @Test func sharedDirectivesAreParsedAndStored() throws {
        let control = CacheControl("Private, S-MaxAge=\"30\", proxy-revalidate, max-age=5")
        #expect(control.isPrivate && control.sharedMaxAge == 30 && control.proxyRevalidate && !control.mustRevalidate)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let metadata = CacheEntryMetadata(headers: ["cache-control": "private, s-maxage=30, max-age=5", "etag": "\"e\""], requestHeaders: [:],
                                          now: now, shared: true)
        #expect(metadata.lifetime == 30 && metadata.mustRevalidate && metadata.isPrivate && !metadata.isStorable(modifiesRequests: false))
        #expect(CacheEntryMetadata(stored: metadata.stored) == metadata)
        let refreshed = metadata.refreshed(by: ["cache-control": "s-maxage=90"], now: now)
        #expect(refreshed.shared && refreshed.lifetime == 90)
        #expect(CacheEntryMetadata(headers: ["cache-control": "s-maxage=30, max-age=5"], requestHeaders: [:], now: now).lifetime == 5,
                "a private cache reads max-age")
        #expect(HTTPCachePolicy(rawValue: "shared") == .respectHeadersShared && HTTPCachePolicy.respectHeadersShared.respectsHeaders)
    }
}

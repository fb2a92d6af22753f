import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import WebImage

/// `.refreshCached` reads the disk entry and its validators in one trip to the disk thread.
@Suite struct RefreshTripTests {
    @Test func aRefreshReadsTheEntryAndItsValidatorsInOneTrip() async throws {
        let trips = Atomic<Int>(0)
        let directory = TemporaryDirectory(); defer { directory.remove() }
        var diskConfiguration = DiskCache.Configuration(ioHook: { trips.add(1, ordering: .relaxed) })
        diskConfiguration.cleanupInterval = nil
        let cache = ImageCache(memory: MemoryCache(), disk: DiskCache(directory: directory.url, configuration: diskConfiguration))
        let h = try await ManagerHarness(cache: cache)
        h.server.route("/e.png", .etag("\"v1\"", body: ManagerHarness.png))
        _ = try await h.manager.result(for: h.url("/e.png"), options: .waitStoreCache)
        await cache.clear(.memory)
        trips.store(0, ordering: .relaxed)
        let refreshed = try await h.manager.result(for: h.url("/e.png"), options: .refreshCached)
        #expect(refreshed.cacheType == .disk, "304: the cached image")
        let sent = Dictionary(h.server.headers(of: "/e.png").map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(sent["if-none-match"] == "\"v1\"", "the validators were sent")
        await h.manager.waitForPendingStores()
        // One trip reads the entry with its validators; one more writes the freshness the 304 refreshed.
        #expect(trips.load(ordering: .relaxed) == 2, "\(trips.load(ordering: .relaxed)) trips to the disk thread")
        // The query API gives the extended data with a memory hit too.
        let hit = await cache.image(forKey: h.url("/e.png").absoluteString, query: ImageCacheQuery(includingExtendedData: true))
        #expect(hit?.cacheType == .memory && hit?.extendedData != nil)
        await h.finish()
    }

    /// Validators read from a damaged or planted cache file never carry a line break into the
    /// conditional request (header injection); a clean one is kept.
    @Test func storedValidatorsWithLineBreaksAreDropped() {
        let planted = Data("webimage-validators\n\"a\"\r\nX-Injected: 1\nWed, 21 Oct 2015 07:28:00 GMT\r".utf8)
        #expect(CacheValidators(stored: planted) == nil)
        let half = CacheValidators(stored: Data("webimage-validators\n\"a\"\r\nX: 1\nWed, 21 Oct 2015 07:28:00 GMT".utf8))
        #expect(half == CacheValidators(etag: nil, lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"))
        #expect(CacheValidators(headers: ["etag": "\"b\""])?.etag == "\"b\"")
    }
}

import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import WebImage

/// Where a disk query runs: in the load's own task for its own key, in a task shared by
/// concurrent queries of a key for the cache's API and for a cached original.
@Suite struct DiskQueryTests {
    /// A load reads its own key's entry in its own task (its work already shares every caller
    /// of the key); a query through the cache's API, and a load's query of a cached original,
    /// go through the table shared by concurrent queries of a key.
    @Test func aLoadReadsItsOwnKeyInItsTaskAndSharesOtherQueries() async throws {
        let seen = Mutex<[Int]>([])
        let watched = Mutex<ImageCache?>(nil)
        // The hook holds `watched`, which holds the cache that holds the hook: let go at the end.
        defer { watched.withLock { $0 = nil } }
        let directory = TemporaryDirectory(); defer { directory.remove() }
        var diskConfiguration = DiskCache.Configuration(ioHook: {
            guard let cache = watched.withLock({ $0 }) else { return }
            seen.withLock { $0.append(cache.sharedDiskQueryCount) }
        })
        diskConfiguration.cleanupInterval = nil
        // Every read reaches the file system here (a known-absent key would not: see NegativeLookupTests).
        diskConfiguration.negativeLookup = false
        let cache = ImageCache(memory: MemoryCache(), disk: DiskCache(directory: directory.url, configuration: diskConfiguration))
        watched.withLock { $0 = cache }
        let h = try await ManagerHarness(cache: cache)
        h.server.route("/d.png", .respond(body: ManagerHarness.png))
        _ = try await h.manager.image(for: h.url("/d.png"), options: .waitStoreCache)
        await cache.clear(.memory)
        #expect(try await h.manager.result(for: h.url("/d.png")).cacheType == .disk)
        let byLoads = seen.withLock { $0 }
        #expect(!byLoads.isEmpty && byLoads.allSatisfy { $0 == 0 }, "the loads' disk reads: \(byLoads)")
        seen.withLock { $0 = [] }
        await cache.clear(.memory)
        #expect(await cache.image(forKey: h.url("/d.png").absoluteString, query: ImageCacheQuery(scope: .disk))?.cacheType == .disk)
        #expect(seen.withLock { $0 } == [1], "the query API's read is a shared query")
        // A thumbnail load reads its own key in its task, and the cached original through the
        // shared queries (loads of other sizes of one original read it once).
        seen.withLock { $0 = [] }
        var context = ImageContext()
        context.thumbnailPixelSize = PixelSize(width: 4, height: 4)
        _ = try await h.manager.image(for: h.url("/d.png"), context: context)
        #expect(h.server.requestCount("/d.png") == 1, "the original on disk was used")
        #expect(seen.withLock { $0.prefix(2) } == [0, 1], "its own key, then the original: \(seen.withLock { $0 })")
        await h.finish()
    }
}

import Foundation
import Testing
@testable import WebImage

/// Where the manager looks and with which plug-ins (after SDWebImageManagerTests' query-cache-type,
/// original-query and custom cache/loader tests).
@Suite struct CacheQueryTests {
    @Test func queryCacheTypeDecidesWhereTheManagerLooks() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let url = h.url("/a.png")
        try await h.cache.store(nil, data: ManagerHarness.png, forKey: url.absoluteString, to: .disk)
        var context = ImageContext()
        context.queryCacheType = .memory
        context.storeCacheType = ImageCacheType.none
        #expect(try await h.manager.result(for: url, context: context).cacheType == ImageCacheType.none)
        context.queryCacheType = ImageCacheType.none
        #expect(try await h.manager.result(for: url, context: context).cacheType == ImageCacheType.none)
        #expect(h.server.requestCount("/a.png") == 2)
        context.queryCacheType = .disk
        #expect(try await h.manager.result(for: url, context: context).cacheType == .disk)
        #expect(h.server.requestCount("/a.png") == 2)
        await h.finish()
    }

    @Test func aThumbnailFromTheCachedOriginalWritesOnlyItsOwnKey() async throws {
        let h = try await ManagerHarness()
        let url = h.url("/big.jpg")
        try await h.cache.store(nil, data: ManagerHarness.jpeg, forKey: url.absoluteString, to: .disk)
        var context = ImageContext(thumbnailPixelSize: PixelSize(width: 64, height: 64))
        context.originalQueryCacheType = .disk
        let thumbnail = try await h.manager.result(for: url, options: .waitStoreCache, context: context)
        #expect(thumbnail.image.width == 64 && thumbnail.image.height == 48 && thumbnail.cacheType == .disk)
        #expect(h.server.requestCount("/big.jpg") == 0)
        let thumbnailKey = h.manager.cacheKey(for: url, context: context)
        #expect(await h.cache.containsImage(forKey: thumbnailKey, in: .all) == .all)
        // The original's entries still hold the full-size image.
        let original = try #require(await h.cache.image(forKey: url.absoluteString, from: .all, options: .init(), includingData: false))
        #expect(original.image.width == 640)
        #expect(await h.cache.disk.data(forKey: url.absoluteString) == ManagerHarness.jpeg)
        await h.finish()
    }

    @Test func aLoaderAndACacheFromTheContextReplaceTheManagers() async throws {
        let h = try await ManagerHarness()
        let loader = RecordingLoader(bodies: ["/x.png": ManagerHarness.png])
        let other = TemporaryDirectory()
        defer { other.remove() }
        let cache = InstrumentedCache(base: ImageCache(namespace: "other", directory: other.url))
        var context = ImageContext()
        context.loader = loader
        context.cache = cache
        let url = URL(string: "mem:/x.png")!
        #expect(try await h.manager.result(for: url, options: .waitStoreCache, context: context).cacheType == ImageCacheType.none)
        #expect(try await h.manager.result(for: url, context: context).cacheType == .memory)
        #expect(loader.requests.count == 1 && cache.stores >= 1 && cache.queries >= 2)
        #expect(await h.cache.containsImage(forKey: url.absoluteString, in: .all) == ImageCacheType.none)
        // Without the context the manager's loaders do not know the scheme.
        await #expect(throws: ImageError.invalidURL(url.absoluteString)) { _ = try await h.manager.image(for: url, options: .fromLoaderOnly) }
        await h.finish()
    }

    @Test func eventsOfAMemoryHitAndCancellingTheIteration() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        h.server.route("/stall.png", .stallAfter(bytes: 10, body: ManagerHarness.png))
        _ = try await h.manager.image(for: h.url("/a.png"))
        var events: [ImageEvent] = []
        for try await event in h.manager.events(for: h.url("/a.png")) { events.append(event) }
        guard events.count == 1, case .finished(let result) = events[0] else { Issue.record("\(events)"); return }
        #expect(result.cacheType == .memory)
        let manager = h.manager, stall = h.url("/stall.png")
        let iterating = Task {
            var count = 0
            for try await _ in manager.events(for: stall) { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(100))
        iterating.cancel()
        _ = await iterating.result
        for _ in 0..<100 where h.loader.liveTransferCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(h.loader.liveTransferCount == 0)
        await h.finish()
    }

    @Test func theSharedManagerIsNotANewOne() {
        #expect(ImageManager.shared === ImageManager.shared)
        #expect(ImageManager.shared !== ImageManager())
        #expect(ImagePrefetcher.shared.maxConcurrentPrefetchCount == 3)
    }
}

import Foundation
import Synchronization
import Testing
@testable import WebImage

/// A disk layer over a dictionary: what a user's own storage (a database, an object store)
/// looks like to `ImageCache`. It counts what it is asked.
final class DictionaryDiskLayer: ImageDiskCaching {
    private let entries = Mutex<[String: (data: Data, extended: Data?)]>([:])
    let stores = Mutex<[String]>([])

    func data(forKey key: String) async -> Data? { entries.withLock { $0[key]?.data } }
    func extendedData(forKey key: String) async -> Data? { entries.withLock { $0[key]?.extended } }
    func store(_ data: Data, extendedData: Data?, forKey key: String) async throws {
        entries.withLock { $0[key] = (data, extendedData) }
        stores.withLock { $0.append(key) }
    }
    func setExtendedData(_ data: Data?, forKey key: String) async throws {
        entries.withLock { $0[key]?.extended = data }
    }
    func removeData(forKey key: String) async { _ = entries.withLock { $0.removeValue(forKey: key) } }
    func contains(_ key: String) async -> Bool { entries.withLock { $0[key] != nil } }
    func removeAll() async -> DiskCache.CleanupReport {
        entries.withLock { entries in
            defer { entries = [:] }
            return DiskCache.CleanupReport(removedCount: entries.count, removedBytes: entries.values.reduce(0) { $0 + $1.data.count })
        }
    }
    func removeExpiredData() async -> DiskCache.CleanupReport { DiskCache.CleanupReport(removedCount: 0, removedBytes: 0) }
    func count() async -> Int { entries.withLock { $0.count } }
    func totalSize() async -> Int { entries.withLock { $0.values.reduce(0) { $0 + $1.data.count } } }
    var location: String { "a dictionary" }
    func containsData(forKey key: String) -> Bool { entries.withLock { $0[key] != nil } }
    func cachedData(forKey key: String) -> Data? { entries.withLock { $0[key]?.data } }
}

/// A memory layer that keeps everything and counts its stores.
final class CountingMemoryLayer: ImageMemoryCaching {
    private let images = Mutex<[String: Image]>([:])
    let stores = Mutex(0)

    func image(forKey key: String) -> Image? { images.withLock { $0[key] } }
    func contains(_ key: String) -> Bool { images.withLock { $0[key] != nil } }
    func setImage(_ image: Image, forKey key: String, cost: Int?, lifetime: Duration?) {
        images.withLock { $0[key] = image }
        stores.withLock { $0 += 1 }
    }
    func removeImage(forKey key: String) { _ = images.withLock { $0.removeValue(forKey: key) } }
    func removeAll() { images.withLock { $0 = [:] } }
}

/// `ImageCache` over layers of one's own (SDWebImage's `SDMemoryCacheProtocol` and
/// `SDDiskCacheProtocol`, its `SDImageCacheConfig.memoryCacheClass`/`diskCacheClass`).
@Suite struct CacheLayerTests {
    /// SDWebImage: `SDImageCacheTests` `test49CustomDiskCache...` / `testCustomMemoryCache`
    /// (a custom layer class receives the cache's stores and answers its queries): a load's
    /// stores reach both layers; with memory emptied the disk layer's bytes are the disk hit;
    /// the synchronous lookups, removal and clearing go through the layer.
    @Test func aCustomDiskLayerAndMemoryLayerReceiveTheStores() async throws {
        let disk = DictionaryDiskLayer()
        let memory = CountingMemoryLayer()
        let cache = ImageCache(memory: memory, disk: disk, config: .init(cleanupInterval: nil))
        #expect(cache.memoryCache == nil && cache.diskCache == nil)
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let manager = ImageManager(cache: cache, loaders: ImageLoaders([h.loader]))
        let url = h.url("/a.png"), key = url.absoluteString
        _ = try await manager.image(for: url, options: .waitStoreCache)
        #expect(disk.stores.withLock { $0 } == [key])
        #expect(memory.stores.withLock { $0 } == 1)
        #expect(await disk.data(forKey: key) == ManagerHarness.png)

        await cache.clear(.memory)
        let hit = try await manager.result(for: url)
        #expect(hit.cacheType == .disk && hit.image.width == 64)
        #expect(h.server.requestCount("/a.png") == 1, "the disk layer answered")
        #expect(cache.diskImageDataExists(forKey: key))
        #expect(cache.diskImageData(forKey: key) == ManagerHarness.png)
        #expect(await cache.containsImage(forKey: key) == .all)
        await cache.removeImage(forKey: key)
        #expect(await disk.count() == 0)
        #expect(!cache.diskImageDataExists(forKey: key))
        await h.finish()
    }

    /// The HTTP metadata the manager keeps rides in the layer's extended data.
    @Test func theExtendedDataGoesThroughTheLayer() async throws {
        let disk = DictionaryDiskLayer()
        let cache = ImageCache(memory: MemoryCache(), disk: disk, config: .init(cleanupInterval: nil))
        try await cache.store(nil, data: Data([1, 2, 3]), extendedData: Data([9]), forKey: "k", to: .disk, context: .init())
        #expect(await cache.extendedData(forKey: "k") == Data([9]))
        await cache.setExtendedData(Data([8]), forKey: "k")
        #expect(await disk.extendedData(forKey: "k") == Data([8]))
        #expect(await cache.clearDisk().removedCount == 1)
    }

    /// The library's own layers are still reachable as themselves.
    @Test func theLibraryLayersAreSeenAsThemselves() {
        let cache = ImageCache(namespace: "layers-\(UUID().uuidString)", config: .init(cleanupInterval: nil))
        #expect(cache.memoryCache != nil && cache.diskCache != nil)
        #expect(cache.disk.location == cache.diskCache?.directory.path)
    }
}

/// A separate cache for originals (SDWebImage's `SDWebImageContextOriginalImageCache`).
@Suite struct OriginalCacheTests {
    /// SDWebImage: `SDWebImageManagerTests` `test13ThatStoreOriginalImageCacheWorks...` (with an
    /// original cache in the context, the transformed image goes to the cache and the original
    /// to the original cache, and a later transform is made from it): the thumbnail is in the
    /// call's cache, the full-size original in the originals' cache alone, and a second size is
    /// made from that original without a download.
    @Test func theOriginalGoesToItsOwnCacheAndServesTheNextTransform() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let originals = ImageCache(memory: MemoryCache(), disk: DictionaryDiskLayer(), config: .init(cleanupInterval: nil))
        func context(_ side: Int) -> ImageContext {
            var context = ImageContext(thumbnailPixelSize: PixelSize(width: side, height: side))
            context.originalCache = originals
            return context
        }
        let url = h.url("/a.png"), originalKey = url.absoluteString
        let small = try await h.manager.result(for: url, options: .waitStoreCache, context: context(16))
        #expect(small.image.width == 16)
        #expect(await originals.data(forKey: originalKey) == ManagerHarness.png, "the original is in the originals' cache")
        #expect(await h.cache.data(forKey: originalKey) == nil, "and not in the call's cache")
        let thumbnailKey = h.manager.cacheKey(for: url, context: context(16))
        #expect(await h.cache.data(forKey: thumbnailKey) != nil, "the thumbnail is in the call's cache")

        let other = try await h.manager.image(for: url, context: context(32))
        #expect(other.width == 32)
        #expect(h.server.requestCount("/a.png") == 1, "the second size came from the original")
        await h.finish()
    }
}

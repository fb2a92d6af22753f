import Foundation
import Testing
@testable import WebImage

/// What a load writes to disk: the data-cache policies (Nuke's names), the encoding of images
/// stored without their bytes, `originalStoreCacheType`, and `shouldCacheImagesInMemory`.
@Suite struct DataCachePolicyTests {
    static let thumbnail: ImageContext = {
        var context = ImageContext()
        context.thumbnailPixelSize = PixelSize(width: 64, height: 64)
        return context
    }()

    static func context(_ policy: DataCachePolicy?, thumbnail: Bool = true) -> ImageContext {
        var context = thumbnail ? Self.thumbnail : ImageContext()
        context.dataCachePolicy = policy
        return context
    }

    /// Loads `/p.jpg` with `context`, its stores done; returns the disk's bytes under the
    /// load's key and under the original's.
    static func load(_ h: ManagerHarness, _ context: ImageContext) async throws -> (entry: Data?, original: Data?) {
        h.server.route("/p.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))
        _ = try await h.manager.result(for: h.url("/p.jpg"), options: .waitStoreCache, context: context)
        await h.manager.waitForPendingStores()
        let key = h.manager.cacheKey(for: h.url("/p.jpg"), context: context)
        let originalKey = h.url("/p.jpg").absoluteString
        return (await h.cache.disk.data(forKey: key), key == originalKey ? nil : await h.cache.disk.data(forKey: originalKey))
    }

    @Test func automaticStoresTheProcessedImageAndTheOriginalsBytes() async throws {
        let h = try await ManagerHarness()
        let (entry, original) = try await Self.load(h, Self.context(nil))
        #expect(original == ManagerHarness.jpeg, "the original as the server sent it")
        let thumbnail = try ImageCoders.shared.decode(try #require(entry))
        #expect(thumbnail.width == 64, "the thumbnail, encoded")
        let plain = try await Self.load(h, Self.context(.automatic, thumbnail: false))
        #expect(plain.entry == ManagerHarness.jpeg)
        await h.finish()
    }

    @Test func storeOriginalDataKeepsOnlyTheBytesAndRemakesTheThumbnail() async throws {
        let h = try await ManagerHarness()
        let context = Self.context(.storeOriginalData)
        let (entry, original) = try await Self.load(h, context)
        #expect(entry == nil && original == ManagerHarness.jpeg)
        await h.cache.clear(.memory)
        let again = try await h.manager.result(for: h.url("/p.jpg"), context: context)
        #expect(again.image.width == 64 && again.cacheType == .disk && h.server.requestCount("/p.jpg") == 1,
                "made from the cached original, not downloaded")
        await h.finish()
    }

    @Test func storeEncodedImagesNeverKeepsOriginalBytes() async throws {
        let h = try await ManagerHarness()
        let (entry, original) = try await Self.load(h, Self.context(.storeEncodedImages))
        #expect(entry != nil && original == nil)
        let plain = try await Self.load(h, Self.context(.storeEncodedImages, thumbnail: false))
        let bytes = try #require(plain.entry)
        #expect(bytes != ManagerHarness.jpeg, "re-encoded")
        #expect(try ImageCoders.shared.decode(bytes).width == 640)
        await h.finish()
    }

    @Test func storeAllKeepsBothWhateverTheOriginalStoreType() async throws {
        let h = try await ManagerHarness()
        var context = Self.context(.storeAll)
        context.originalStoreCacheType = ImageCacheType.none
        let (entry, original) = try await Self.load(h, context)
        #expect(entry != nil && original == ManagerHarness.jpeg)
        await h.finish()
    }

    @Test func originalStoreCacheTypeDecidesWhereTheOriginalGoes() async throws {
        let h = try await ManagerHarness()
        var context = ImageContext()
        context.transformer = GrayscaleTransformer()
        context.originalStoreCacheType = ImageCacheType.none
        let none = try await Self.load(h, context)
        #expect(none.entry != nil && none.original == nil)
        await h.cache.clear(.all)
        context.originalStoreCacheType = .all
        let all = try await Self.load(h, context)
        #expect(all.original == ManagerHarness.jpeg)
        #expect(h.cache.cachedImage(forKey: h.url("/p.jpg").absoluteString)?.width == 640, "the untransformed original in memory too")
        await h.cache.clear(.all)
        context.originalStoreCacheType = .memory
        let memory = try await Self.load(h, context)
        #expect(memory.original == nil && h.cache.cachedImage(forKey: h.url("/p.jpg").absoluteString) != nil)
        await h.finish()
    }

    @Test func cacheEncodingChoosesFormatQualityAndSize() async throws {
        let h = try await ManagerHarness()
        var context = Self.context(nil)
        context.thumbnailPixelSize = PixelSize(width: 320, height: 320)
        context.cacheEncoding = CacheEncoding(format: .png)
        let png = try #require(try await Self.load(h, context).entry)
        #expect(ImageFormat(sniffing: png) == .png)
        await h.cache.clear(.all)
        context.cacheEncoding = CacheEncoding(format: .jpeg, options: .init(quality: 0.95))
        let best = try #require(try await Self.load(h, context).entry)
        await h.cache.clear(.all)
        context.cacheEncoding = CacheEncoding(format: .jpeg, options: .init(quality: 0.95), maxByteCount: best.count / 2)
        let bounded = try #require(try await Self.load(h, context).entry)
        #expect(ImageFormat(sniffing: bounded) == .jpeg)
        #expect(bounded.count <= best.count / 2, "quality stepped down: \(bounded.count) bytes against \(best.count)")
        #expect(try ImageCoders.shared.decode(bounded).width == 320)
        // A lossless format is not stepped: the limit cannot be met, the image is kept whole.
        await h.cache.clear(.all)
        context.cacheEncoding = CacheEncoding(format: .png, maxByteCount: 10)
        #expect(try await Self.load(h, context).entry.map { ImageFormat(sniffing: $0) } == .png)
        await h.finish()
    }

    @Test func shouldCacheImagesInMemoryFalseKeepsLoadsOutOfMemory() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let cache = ImageCache(namespace: "m", directory: directory.url, config: .init(shouldCacheImagesInMemory: false, cleanupInterval: nil))
        let h = try await ManagerHarness(cache: cache)
        h.server.route("/m.png", .respond(body: ManagerHarness.png))
        #expect(try await h.manager.result(for: h.url("/m.png"), options: .waitStoreCache).cacheType == .none)
        #expect(cache.cachedImage(forKey: h.url("/m.png").absoluteString) == nil, "not in memory")
        #expect(try await h.manager.result(for: h.url("/m.png")).cacheType == .disk)
        #expect(try await h.manager.result(for: h.url("/m.png")).cacheType == .disk, "a disk hit is not promoted either")
        #expect(h.server.requestCount("/m.png") == 1)
        await h.finish()
    }
}

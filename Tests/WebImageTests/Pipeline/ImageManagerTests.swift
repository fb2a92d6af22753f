import Foundation
import Testing
@testable import WebImage

/// The pipeline stage by stage against the in-process server (after SDWebImageManagerTests),
/// with request counts asserted.
@Suite struct ImageManagerTests {
    @Test func loadsFromTheNetworkThenMemoryThenDisk() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let first = try await h.manager.result(for: h.url("/a.png"), options: .waitStoreCache)
        #expect(first.cacheType == .none && first.data == ManagerHarness.png && first.url == h.url("/a.png"))
        #expect(first.image.width == 64 && first.image.height == 48)
        let second = try await h.manager.result(for: h.url("/a.png"))
        #expect(second.cacheType == .memory)
        await h.cache.clearMemory()
        let third = try await h.manager.result(for: h.url("/a.png"))
        #expect(third.cacheType == .disk && third.data == ManagerHarness.png)
        #expect(third.image.bitmap == first.image.bitmap)
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    @Test func badURLsFailWithInvalidURLAndSendNothing() async throws {
        let h = try await ManagerHarness()
        for string in ["", "nil", "relative/path.png", "ftp://example.com/a.png", "mailto:someone@example.com", "http://"] {
            await #expect(throws: ImageError.self, "\(string)") { _ = try await h.manager.image(for: string) }
            do { _ = try await h.manager.image(for: string) } catch let error as ImageError {
                guard case .invalidURL = error else { Issue.record("\(string): \(error)"); continue }
            }
        }
        #expect(h.server.requestOrder.isEmpty)
        await h.finish()
    }

    @Test func fromCacheOnlyMissFailsWithoutARequest() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        await #expect(throws: ImageError.notInCache(key: h.url("/a.png").absoluteString)) {
            _ = try await h.manager.image(for: h.url("/a.png"), options: .fromCacheOnly)
        }
        #expect(h.server.requestCount("/a.png") == 0)
        _ = try await h.manager.image(for: h.url("/a.png"), options: .waitStoreCache)
        await h.cache.clearMemory()
        let cached = try await h.manager.result(for: h.url("/a.png"), options: .fromCacheOnly)
        #expect(cached.cacheType == .disk && h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    @Test func fromLoaderOnlySkipsTheCachesButStores() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        _ = try await h.manager.image(for: h.url("/a.png"), options: .waitStoreCache)
        let again = try await h.manager.result(for: h.url("/a.png"), options: [.fromLoaderOnly, .waitStoreCache])
        #expect(again.cacheType == .none && h.server.requestCount("/a.png") == 2)
        #expect(await h.cache.containsImage(forKey: h.url("/a.png").absoluteString, in: .all) == .all)
        await h.finish()
    }

    @Test func refreshCachedRevalidatesAndA304KeepsTheCachedImage() async throws {
        let h = try await ManagerHarness()
        h.server.route("/e.png", .etag("\"v1\"", body: ManagerHarness.png))
        let first = try await h.manager.result(for: h.url("/e.png"), options: .waitStoreCache)
        let refreshed = try await h.manager.result(for: h.url("/e.png"), options: [.refreshCached, .waitStoreCache])
        #expect(h.server.requestCount("/e.png") == 2)
        let sent = Dictionary(h.server.headers(of: "/e.png").map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(sent["if-none-match"] == "\"v1\"")
        #expect(refreshed.cacheType == .memory)
        #expect(refreshed.image.bitmap == first.image.bitmap)
        // Changed on the server: the new image replaces the cached one.
        let other = try Image(bitmap: Fixtures.gradient(width: 10, height: 10)).encoded(as: .png)
        h.server.route("/e.png", .etag("\"v2\"", body: other))
        let changed = try await h.manager.result(for: h.url("/e.png"), options: [.refreshCached, .waitStoreCache])
        #expect(changed.cacheType == .none && changed.image.width == 10)
        #expect(try await h.manager.result(for: h.url("/e.png")).image.width == 10)
        await h.finish()
    }

    /// `.refreshCached` delivers the cached image first (SDWebImage calls its completion block
    /// twice): `.cached` before the network answers, then `.finished` with the fresh image, or
    /// with the cached one on 304; `image(for:)` returns the final one.
    @Test func refreshCachedDeliversTheCachedImageFirst() async throws {
        let h = try await ManagerHarness()
        h.server.route("/e.png", .etag("\"v1\"", body: ManagerHarness.png))
        _ = try await h.manager.result(for: h.url("/e.png"), options: .waitStoreCache)
        func events(_ source: ImageCacheType?) async throws -> [String] {
            if source == .disk { await h.cache.clear(.memory) }
            var seen: [String] = []
            for try await event in h.manager.events(for: h.url("/e.png"), options: [.refreshCached, .waitStoreCache]) {
                switch event {
                case .progress: break
                case .preview: seen.append("preview")
                case .cached(let result): seen.append("cached \(result.cacheType) \(result.image.width)")
                case .finished(let result): seen.append("finished \(result.cacheType) \(result.image.width)")
                }
            }
            return seen
        }
        // Unchanged (304): the cached image twice, first as .cached, then as the final one.
        #expect(try await events(.memory) == ["cached memory 64", "finished memory 64"])
        #expect(try await events(.disk) == ["cached disk 64", "finished disk 64"])
        // Changed on the server: the cached image first, then the fresh one from the network.
        let other = try Image(bitmap: Fixtures.gradient(width: 10, height: 10)).encoded(as: .png)
        h.server.route("/e.png", .etag("\"v2\"", body: other))
        #expect(try await events(.memory) == ["cached memory 64", "finished none 10"])
        #expect(try await h.manager.image(for: h.url("/e.png"), options: .refreshCached).width == 10, "image(for:) returns the final one")
        // Nothing cached: no .cached event.
        #expect(try await h.manager.events(for: h.url("/e.png?new"), options: .refreshCached).reduce(0) { count, event in
            if case .cached = event { return count + 1 }
            return count
        } == 0)
        await h.finish()
    }

    @Test func backgroundDiskWritesCanBeAwaited() async throws {
        let h = try await ManagerHarness()
        for i in 0..<5 { h.server.route("/w\(i).png", .respond(body: ManagerHarness.png)) }
        // A store takes 1 s: five loads return well within it unless they wait for their writes
        // (a 300 ms delay was too close to five loads on a busy machine).
        let slowDisk = InstrumentedCache(base: h.cache, storeDelay: .seconds(1))
        var context = ImageContext()
        context.cache = slowDisk
        let manager = h.manager
        let urls = (0..<5).map { h.url("/w\($0).png") }
        let start = ContinuousClock.now
        for url in urls { _ = try await manager.image(for: url, context: context) }
        #expect(ContinuousClock.now - start < .seconds(1), "the loads waited for their disk writes")
        #expect(await h.cache.disk.contains(urls[0].absoluteString) == false, "written before the delay ended")
        await manager.waitForPendingStores()
        for url in urls {
            #expect(await h.cache.disk.contains(url.absoluteString), "\(url) not on disk")
        }
        await manager.waitForPendingStores()   // nothing pending: returns at once
        await h.finish()
    }

    /// A thumbnail load of another size, made as soon as the first returned, finds the original
    /// the first is still writing (a slow disk) instead of downloading it again.
    @Test func anotherSizeWaitsForTheOriginalsWriteInsteadOfDownloadingIt() async throws {
        let h = try await ManagerHarness()
        h.server.route("/o.png", .respond(body: ManagerHarness.png))
        let slowDisk = InstrumentedCache(base: h.cache, storeDelay: .milliseconds(400))
        var small = ImageContext(thumbnailPixelSize: PixelSize(width: 16, height: 16))
        small.cache = slowDisk
        var smaller = ImageContext(thumbnailPixelSize: PixelSize(width: 8, height: 8))
        smaller.cache = slowDisk
        #expect(try await h.manager.image(for: h.url("/o.png"), context: small).width == 16)
        #expect(try await h.manager.image(for: h.url("/o.png"), context: smaller).width == 8)
        #expect(h.server.requestCount("/o.png") == 1, "the original was downloaded again while it was being written")
        await h.manager.waitForPendingStores()
        await h.finish()
    }

    @Test func queryMemoryDataReturnsTheDataOfAMemoryHit() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        _ = try await h.manager.image(for: h.url("/a.png"), options: .waitStoreCache)
        let plain = try await h.manager.result(for: h.url("/a.png"))
        #expect(plain.cacheType == .memory && plain.data == nil)
        let withData = try await h.manager.result(for: h.url("/a.png"), options: .queryMemoryData)
        #expect(withData.cacheType == .memory && withData.data == ManagerHarness.png)
        await h.finish()
    }

    @Test func storeCacheTypeDecidesWhereTheImageGoes() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        var context = ImageContext()
        context.storeCacheType = .memory
        _ = try await h.manager.image(for: h.url("/a.png"), options: .waitStoreCache, context: context)
        #expect(await h.cache.containsImage(forKey: h.url("/a.png").absoluteString, in: .all) == .memory)
        await h.cache.clear(.all)
        context.storeCacheType = ImageCacheType.none
        _ = try await h.manager.image(for: h.url("/a.png"), options: .waitStoreCache, context: context)
        #expect(await h.cache.containsImage(forKey: h.url("/a.png").absoluteString, in: .all) == ImageCacheType.none)
        await h.finish()
    }

    /// SDWebImage's test49SDImageCacheQueryOp: the store cache type decides whether a disk hit
    /// is copied into memory.
    @Test func aDiskHitIsPromotedToMemoryOnlyWhenTheStoreTypeIncludesMemory() async throws {
        let h = try await ManagerHarness()
        let url = h.url("/never-requested.png"), key = url.absoluteString
        try await h.cache.store(nil, data: ManagerHarness.png, forKey: key, to: .disk)
        var diskOnly = ImageContext()
        diskOnly.storeCacheType = .disk
        #expect(try await h.manager.result(for: url, context: diskOnly).cacheType == .disk)
        #expect(await h.cache.containsImage(forKey: key, in: .memory) == ImageCacheType.none, "a .disk store type promoted the hit")
        #expect(try await h.manager.result(for: url, context: diskOnly).cacheType == .disk, "still a disk hit")
        // The default store type (all) promotes, as before.
        #expect(try await h.manager.result(for: url).cacheType == .disk)
        #expect(await h.cache.containsImage(forKey: key, in: .memory) == .memory)
        #expect(h.server.requestCount("/never-requested.png") == 0)
        await h.finish()
    }

    /// SDWebImage's test18ThatThumbnailLoadingCanUseFullSizeCache and
    /// test21ThatQueryOriginalDiskCacheFromThumbnailShouldNotWriteBackDiskCache.
    @Test func aThumbnailIsMadeFromTheFullSizeDiskEntryWithoutWritingTheFullSizeKey() async throws {
        let h = try await ManagerHarness()
        let url = h.url("/big.jpg"), key = url.absoluteString
        let original = ManagerHarness.jpeg   // 640x480
        try await h.cache.store(nil, data: original, forKey: key, to: .disk)
        let modified = try #require(try FileManager.default.attributesOfItem(atPath: h.cache.diskCache!.fileURL(forKey: key).path)[.modificationDate] as? Date)
        var context = ImageContext()
        context.thumbnailPixelSize = PixelSize(width: 64, height: 64)
        // originalQueryCacheType left at its default (.disk, as current SDWebImage 5.x).
        let result = try await h.manager.result(for: url, options: .waitStoreCache, context: context)
        #expect(result.image.width == 64 && result.image.height == 48)
        #expect(h.server.requestCount("/big.jpg") == 0, "the full-size data on disk was used")
        let thumbnailKey = h.manager.cacheKey(for: url, context: context)
        #expect(thumbnailKey != key)
        #expect(await h.cache.containsImage(forKey: thumbnailKey, in: .all) != ImageCacheType.none, "the thumbnail is stored under its key")
        #expect(await h.cache.containsImage(forKey: key, in: .memory) == ImageCacheType.none, "the full-size key went into memory")
        #expect(await h.cache.disk.data(forKey: key) == original, "the original's bytes changed")
        let after = try #require(try FileManager.default.attributesOfItem(atPath: h.cache.diskCache!.fileURL(forKey: key).path)[.modificationDate] as? Date)
        #expect(after == modified, "the original was written again")
        await h.finish()
    }

    /// Decode options are part of what a memory hit must match, and a reduced decode (first
    /// frame, scaled down) never goes into memory under the plain key.
    @Test func decodeOptionsArePartOfWhatAMemoryHitMatches() async throws {
        let h = try await ManagerHarness()
        h.server.route("/anim.gif", .respond(contentType: "image/gif", body: ManagerHarness.gif))
        h.server.route("/big.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))
        let anim = h.url("/anim.gif"), big = h.url("/big.jpg")
        // A first-frame call first: a still, kept out of memory under the plain key.
        let first = try await h.manager.result(for: anim, options: [.decodeFirstFrameOnly, .waitStoreCache])
        #expect(first.image.frameCount == 1)
        #expect(await h.cache.containsImage(forKey: anim.absoluteString, in: .memory) == ImageCacheType.none)
        // A plain call then gets the animation (from disk: the original bytes are stored).
        let plain = try await h.manager.result(for: anim)
        #expect(plain.image.frameCount == 3, "a plain call got the reduced image")
        #expect(plain.cacheType == .disk)
        // Now memory holds the animation; a first-frame call on that memory hit gets a still.
        let hit = try await h.manager.result(for: anim, options: .decodeFirstFrameOnly)
        #expect(hit.cacheType == .memory && hit.image.frameCount == 1)
        #expect(try await h.manager.result(for: anim).image.frameCount == 3)
        // A scaled-down decode (SDWebImage's scaleDownLargeImages) is not a plain memory entry either.
        var small = ImageContext()
        small.scaleDownLimitBytes = 64 * 48 * 4
        let scaled = try await h.manager.result(for: big, options: [.scaleDownLargeImages, .waitStoreCache], context: small)
        #expect(scaled.image.width < 640)
        #expect(try await h.manager.result(for: big).image.width == 640, "a plain call got the scaled-down image")
        #expect(h.server.requestCount("/big.jpg") == 1 && h.server.requestCount("/anim.gif") == 1)
        await h.finish()
    }

    @Test func transformerChangesTheKeyAndKeepsTheOriginalOnDisk() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let context = ImageContext(transformer: FlippingTransformer(horizontal: true, vertical: false))
        let url = h.url("/a.png")
        let key = h.manager.cacheKey(for: url, context: context)
        #expect(key == url.absoluteString.replacingOccurrences(of: "a.png", with: "a-FlippingTransformer(1,0).png"))
        let result = try await h.manager.result(for: url, options: .waitStoreCache, context: context)
        #expect(result.data == nil && result.cacheType == .none)
        let expected = try FlippingTransformer(horizontal: true, vertical: false).transform(Image(data: ManagerHarness.png))
        #expect(result.image.bitmap == expected.bitmap)
        #expect(await h.cache.containsImage(forKey: key, in: .all) == .all)
        #expect(await h.cache.containsImage(forKey: url.absoluteString, in: .all) == .disk)
        // A second transformer of the same URL starts from the cached original by default
        // (originalQueryCacheType .disk, as current SDWebImage 5.x): no new request.
        let rotated = ImageContext(transformer: RotationTransformer(angle: .pi / 2, fitSize: true))
        let fromOriginal = try await h.manager.result(for: url, context: rotated)
        #expect(fromOriginal.cacheType == .disk && fromOriginal.image.width == 48)
        #expect(h.server.requestCount("/a.png") == 1)
        // Told not to look for the original, a third transformer downloads.
        var noOriginal = ImageContext(transformer: GrayscaleTransformer())
        noOriginal.originalQueryCacheType = ImageCacheType.none
        let downloaded = try await h.manager.result(for: url, context: noOriginal)
        #expect(downloaded.cacheType == .none)
        #expect(h.server.requestCount("/a.png") == 2)
        await h.finish()
    }

    @Test func animatedImagesAreTransformedOnlyWhenAsked() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.gif", .respond(contentType: "image/gif", body: ManagerHarness.gif))
        let context = ImageContext(transformer: ResizingTransformer(width: 16, height: 16))
        let untouched = try await h.manager.image(for: h.url("/a.gif"), context: context)
        #expect(untouched.isAnimated && untouched.width == 32)
        let transformed = try await h.manager.image(for: h.url("/a.gif"), options: [.transformAnimatedImage, .fromLoaderOnly], context: context)
        #expect(transformed.isAnimated && transformed.width == 16 && transformed.frameCount == 3)
        let first = try await h.manager.image(for: h.url("/a.gif"), options: [.decodeFirstFrameOnly, .fromLoaderOnly])
        #expect(!first.isAnimated)
        let preloaded = try await h.manager.image(for: h.url("/a.gif"), options: [.preloadAllFrames, .fromLoaderOnly])
        #expect(preloaded.frameCount == 3)
        #expect(try preloaded.frame(at: 2).duration == 0.1)
        // The same options on a memory hit (the plain animation is in memory by now).
        #expect(try await h.manager.result(for: h.url("/a.gif")).cacheType == .memory)
        let firstHit = try await h.manager.result(for: h.url("/a.gif"), options: .decodeFirstFrameOnly)
        #expect(firstHit.cacheType == .memory && !firstHit.image.isAnimated)
        let preloadedHit = try await h.manager.result(for: h.url("/a.gif"), options: .preloadAllFrames)
        #expect(preloadedHit.cacheType == .memory && preloadedHit.image.frameCount == 3)
        #expect(try preloadedHit.image.frame(at: 2).duration == 0.1)
        #expect(h.server.requestCount("/a.gif") == 4)
        await h.finish()
    }

    @Test func aFillSizeDecodesSmallerAndHasItsOwnKey() async throws {
        let h = try await ManagerHarness()
        h.server.route("/big.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))   // 640x480
        var context = ImageContext()
        context.fillPixelSize = PixelSize(width: 100, height: 100)
        let url = h.url("/big.jpg")
        #expect(h.manager.cacheKey(for: url, context: context).hasSuffix("big-Fill(%7B100,100%7D).jpg"))
        let filled = try await h.manager.result(for: url, options: .waitStoreCache, context: context)
        #expect(filled.image.width == 134 && filled.image.height == 100 && filled.data == nil, "a reduced image is not the source's bytes")
        // Another box is another image; the transfer was shared or reused, the original kept on disk.
        context.fillPixelSize = PixelSize(width: 0, height: 240)
        let half = try await h.manager.image(for: url, context: context)
        #expect(half.width == 320 && half.height == 240)
        #expect(await h.cache.containsImage(forKey: url.absoluteString, in: .all) == .disk)
        let again = try await h.manager.result(for: url, context: context)
        #expect(again.cacheType == .memory && again.image.width == 320)
        #expect(h.server.requestCount("/big.jpg") == 1)
        // An original that memory keeps (a plain load put it there) is full size: the fill box is applied to it.
        let other = h.url("/big.jpg?kept")
        h.server.route("/big.jpg?kept", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))
        // The callers may go on before the memory store is done: this one waits for the stores.
        _ = try await h.manager.result(for: other, options: .waitStoreCache)
        #expect(h.cache.memory.image(forKey: other.absoluteString)?.width == 640)
        context.originalQueryCacheType = .all
        context.fillPixelSize = PixelSize(width: 0, height: 120)
        let fromOriginal = try await h.manager.result(for: other, context: context)
        #expect(fromOriginal.cacheType == .memory && fromOriginal.image.width == 160 && fromOriginal.image.height == 120)
        await h.finish()
    }

    @Test func aFillAnchorCutsTheBoxAndHasItsOwnKey() async throws {
        let h = try await ManagerHarness()
        h.server.route("/big.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))   // 640x480
        var context = ImageContext()
        context.fillPixelSize = PixelSize(width: 300, height: 100)
        let url = h.url("/big.jpg")
        let filledKey = h.manager.cacheKey(for: url, context: context)
        context.fillAnchor = FillAnchor(x: 0.5, y: 1)
        let key = h.manager.cacheKey(for: url, context: context)
        #expect(key != filledKey && key.hasSuffix("big-Fill(%7B300,100%7D,%7B0.500000,1.000000%7D).jpg"), "\(key)")
        // Decoded (JPEG: the box's rows only), then the same box from the fill without an anchor.
        let cut = try await h.manager.image(for: url, context: context)
        #expect(cut.width == 300 && cut.height == 100)
        context.fillAnchor = nil
        let whole = try await h.manager.image(for: url, context: context)
        #expect(whole.width == 300 && whole.height == 225)
        let bottom = try CroppingTransformer(x: 0, y: 125, width: 300, height: 100).transform(whole.bitmap)
        let same = cut.bitmap.rgba == bottom.rgba
        #expect(same)
        // From an original that memory keeps at full size: the pipeline reduces and cuts it.
        let other = h.url("/big.jpg?kept")
        h.server.route("/big.jpg?kept", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))
        _ = try await h.manager.result(for: other, options: .waitStoreCache)
        context.originalQueryCacheType = .all
        context.fillAnchor = .center
        let fromOriginal = try await h.manager.result(for: other, context: context)
        #expect(fromOriginal.cacheType == .memory && fromOriginal.image.width == 300 && fromOriginal.image.height == 100)
        await h.finish()
    }

    @Test func thumbnailsFitOrStretchAndHaveTheirOwnKey() async throws {
        let h = try await ManagerHarness()
        h.server.route("/big.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))
        var context = ImageContext(thumbnailPixelSize: PixelSize(width: 100, height: 100))
        let url = h.url("/big.jpg")
        #expect(h.manager.cacheKey(for: url, context: context).hasSuffix("big-Thumbnail(%7B100.000000,100.000000%7D,1).jpg"))
        let fit = try await h.manager.image(for: url, options: .waitStoreCache, context: context)
        #expect(fit.width == 100 && fit.height == 75)
        context.thumbnailPixelSize = PixelSize(width: 200, height: 50)
        let box = try await h.manager.image(for: url, context: context)
        #expect(box.width == 67 && box.height == 50)
        context.preserveAspectRatio = false
        let stretched = try await h.manager.image(for: url, context: context)
        #expect(stretched.width == 200 && stretched.height == 50)
        // The full-size original went to disk (originalStoreCacheType .disk); the transfer was shared or reused.
        #expect(await h.cache.containsImage(forKey: url.absoluteString, in: .all) == .disk)
        await h.finish()
    }

    @Test func scaleDownLargeImagesBoundsThePixels() async throws {
        let h = try await ManagerHarness()
        h.server.route("/big.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))
        var context = ImageContext()
        context.scaleDownLimitBytes = 100_000 * 4
        let image = try await h.manager.image(for: h.url("/big.jpg"), options: .scaleDownLargeImages, context: context)
        #expect(image.width * image.height <= 100_000 + 700 && image.width >= 360)
        #expect(abs(Double(image.width) / Double(image.height) - 4.0 / 3.0) < 0.02)
        await h.finish()
    }

    @Test func keyFilterSerializerAndScaleFactor() async throws {
        let h = try await ManagerHarness()
        h.server.route("/icon@2x.png", .respond(body: ManagerHarness.png))
        var context = ImageContext()
        context.cacheKeyFilter = .droppingQuery
        context.cacheSerializer = CacheSerializer { image, _, _ in try? image.encoded(as: .webp) }
        let url = URL(string: h.url("/icon@2x.png").absoluteString + "?sig=123")!
        #expect(h.manager.cacheKey(for: url, context: context) == h.url("/icon@2x.png").absoluteString)
        let image = try await h.manager.image(for: url, options: .waitStoreCache, context: context)
        #expect(image.scale == 2)
        let stored = await h.cache.disk.data(forKey: h.url("/icon@2x.png").absoluteString)
        #expect(stored.map { ImageFormat(sniffing: $0) } == .webp)
        // A filter that returns nil: nothing is cached.
        var uncached = ImageContext()
        uncached.cacheKeyFilter = CacheKeyFilter { _ in nil }
        _ = try await h.manager.image(for: h.url("/icon@2x.png"), options: .waitStoreCache, context: uncached)
        _ = try await h.manager.image(for: h.url("/icon@2x.png"), options: .waitStoreCache, context: uncached)
        #expect(h.server.requestCount("/icon@2x.png") == 3)
        await h.finish()
    }

    @Test func contextBeatsConfigurationBeatsDefaults() async throws {
        var configuration = ImageManager.Configuration()
        configuration.transformer = FlippingTransformer(horizontal: true, vertical: false)
        configuration.defaultOptions = .waitStoreCache
        let h = try await ManagerHarness(configuration: configuration)
        let url = h.url("/a.png")
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        #expect(h.manager.cacheKey(for: url).contains("FlippingTransformer(1,0)"))
        #expect(h.manager.cacheKey(for: url, context: ImageContext(transformer: GrayscaleTransformer())).contains("Grayscale"))
        // The configured default options apply: .waitStoreCache means the disk entry is there
        // the moment the call returns, with no waitForPendingStores.
        _ = try await h.manager.image(for: url)
        #expect(await h.cache.disk.contains(h.manager.cacheKey(for: url)), "the default .waitStoreCache was not applied")
        var processed = ImageManager.Configuration()
        processed.optionsProcessor = { url, options, context in
            url.path.hasSuffix(".offline") ? (options.union(.fromCacheOnly), context) : (options, context)
        }
        let p = try await ManagerHarness(configuration: processed)
        p.server.route("/x.offline", .respond(body: ManagerHarness.png))
        await #expect(throws: ImageError.notInCache(key: p.url("/x.offline").absoluteString)) {
            _ = try await p.manager.image(for: p.url("/x.offline"))
        }
        #expect(p.server.requestCount("/x.offline") == 0)
        await h.finish()
        await p.finish()
    }

    @Test func callsWithAnEmptyContextUseTheConfiguredDefaults() async throws {
        // Such calls take the defaults' settings worked out when the manager was made.
        var configuration = ImageManager.Configuration()
        configuration.defaultContext.thumbnailPixelSize = PixelSize(width: 16, height: 16)
        configuration.transformer = FlippingTransformer(horizontal: true, vertical: false)
        let h = try await ManagerHarness(configuration: configuration)
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let url = h.url("/a.png")
        let small = try await h.manager.image(for: url, options: .waitStoreCache)
        #expect(small.width == 16)
        let key = h.manager.cacheKey(for: url)
        #expect(key.contains("FlippingTransformer(1,0)") && key != url.absoluteString)
        #expect(await h.manager.cache.containsImage(forKey: key, in: .memory) == .memory)
        // A call's own context still wins over them.
        let larger = try await h.manager.image(for: url, options: .waitStoreCache,
                                               context: ImageContext(thumbnailPixelSize: PixelSize(width: 32, height: 32)))
        #expect(larger.width == 32)
        await h.finish()
    }

    @Test func shouldDownloadHookCanRefuse() async throws {
        var configuration = ImageManager.Configuration()
        configuration.shouldDownload = { !$0.path.contains("private") }
        let h = try await ManagerHarness(configuration: configuration)
        h.server.route("/private.png", .respond(body: ManagerHarness.png))
        await #expect(throws: ImageError.downloadNotAllowed(h.url("/private.png"))) {
            _ = try await h.manager.image(for: h.url("/private.png"))
        }
        #expect(h.server.requestCount("/private.png") == 0)
        await h.finish()
    }

    @Test func requestAndResponseModifiersAndDecryptorFromTheContext() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        h.server.route("/b64", .respond(contentType: "text/plain", body: ManagerHarness.png.base64EncodedData()))
        var context = ImageContext()
        context.requestModifier = { request in
            var request = request
            request.headers["X-Token"] = "secret"
            return request
        }
        _ = try await h.manager.image(for: h.url("/a.png"), options: .fromLoaderOnly, context: context)
        #expect(h.server.headers(of: "/a.png").contains { $0.0.lowercased() == "x-token" && $0.1 == "secret" })
        context.requestModifier = { _ in nil }
        await #expect(throws: ImageError.requestCancelledByModifier(url: h.url("/a.png"))) {
            _ = try await h.manager.image(for: h.url("/a.png"), options: .fromLoaderOnly, context: context)
        }
        var refusing = ImageContext()
        refusing.responseModifier = { $0.mimeType == "image/png" ? nil : $0 }
        await #expect(throws: ImageError.self) {
            _ = try await h.manager.image(for: h.url("/a.png"), options: [.fromLoaderOnly, .retryFailed], context: refusing)
        }
        var decrypting = ImageContext()
        decrypting.decryptor = .base64
        let decoded = try await h.manager.image(for: h.url("/b64"), context: decrypting)
        #expect(decoded.width == 64)
        await h.finish()
    }

    @Test func requestFlagsReachTheLoader() async throws {
        let loader = RecordingLoader(bodies: ["/a.png": ManagerHarness.png, "/b.png": ManagerHarness.png])
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let manager = ImageManager(cache: ImageCache(namespace: "t", directory: directory.url), loaders: ImageLoaders([loader]))
        var context = ImageContext()
        context.downloadTimeout = .seconds(3)
        _ = try await manager.image(for: URL(string: "mem:/a.png")!,
                                    options: [.highPriority, .handleCookies, .allowInvalidSSLCertificates], context: context)
        _ = try await manager.image(for: URL(string: "mem:/b.png")!, options: .lowPriority)
        let requests = loader.requests
        #expect(requests.count == 2)
        #expect(requests[0].priority == .high && requests[0].handlesCookies && requests[0].allowsInvalidCertificates)
        #expect(requests[0].timeout == .seconds(3))
        #expect(requests[1].priority == .low && !requests[1].handlesCookies && !requests[1].allowsInvalidCertificates)
    }

    @Test func aCacheThatFailsToStoreStillReturnsTheImage() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let failing = InstrumentedCache(base: h.cache, failsStores: true)
        var context = ImageContext()
        context.cache = failing
        let result = try await h.manager.result(for: h.url("/a.png"), options: .waitStoreCache, context: context)
        #expect(result.image.width == 64 && failing.stores >= 1)
        await h.finish()
    }

    @Test func aThrowingTransformerFailsWithTransformFailed() async throws {
        struct Broken: ImageTransformer {
            struct Oops: Error {}
            var key: String { "Broken" }
            func transform(_ image: Image) throws -> Image { throw Oops() }
        }
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        do {
            _ = try await h.manager.image(for: h.url("/a.png"), context: ImageContext(transformer: Broken()))
            Issue.record("no error")
        } catch let error as ImageError {
            guard case .transformFailed(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("Broken"))
        }
        #expect(await h.manager.isFailedURL(h.url("/a.png")) == false)
        await h.finish()
    }

    @Test func fileAndDataURLsLoadThroughTheSamePipeline() async throws {
        let h = try await ManagerHarness()
        let file = h.directory.url.appendingPathComponent("local.png")
        try ManagerHarness.png.write(to: file)
        #expect(try await h.manager.image(for: file).width == 64)
        let dataURL = URL(string: "data:image/png;base64," + ManagerHarness.png.base64EncodedString())!
        #expect(try await h.manager.image(for: dataURL).height == 48)
        await h.finish()
    }
}

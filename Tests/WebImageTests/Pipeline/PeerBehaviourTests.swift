import Foundation
import Testing
@testable import WebImage

/// Behaviours SDWebImage's and Nuke's own tests check, through the manager's one route: a
/// first-frame query, a thumbnail query, a joining caller's priority, the modified response.
@Suite(.serialized) struct PeerBehaviourTests {
    /// SDImageCache's query with `SDImageCacheDecodeFirstFrameOnly`: a first-frame query that hits
    /// an animated image in memory gets a still image, as a disk hit decoded that way would.
    @Test func aFirstFrameCacheQueryOfAnAnimatedMemoryHitGivesAStill() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = ImageCache(namespace: "t", directory: directory.url, config: .init(cleanupInterval: nil))
        let animated = try ImageCoders.shared.decode(ManagerHarness.gif)
        #expect(animated.isAnimated)
        try await cache.store(animated, data: nil, forKey: "k", to: .memory)
        let hit = try #require(await cache.image(forKey: "k", from: .all, options: ImageDecodingOptions(firstFrameOnly: true),
                                                 includingData: false))
        #expect(hit.cacheType == .memory)
        #expect(!hit.image.isAnimated, "a first-frame query got every frame")
        #expect(hit.image.width == animated.width && hit.image.height == animated.height)
        // The entry itself is untouched.
        #expect(cache.memory.image(forKey: "k")?.isAnimated == true)
    }

    /// A thumbnail decode asked of the cache directly (the entry only on disk) is not put into
    /// memory under the full-size key: a later full-size query would be given the thumbnail.
    @Test func aThumbnailCacheQueryLeavesTheFullSizeKeyAlone() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = ImageCache(namespace: "t", directory: directory.url, config: .init(cleanupInterval: nil))
        try await cache.store(nil, data: ManagerHarness.jpeg, forKey: "big", to: .disk)
        let small = try #require(await cache.image(forKey: "big", from: .all, options: ImageDecodingOptions(maxPixelSize: 100),
                                                   includingData: false))
        #expect(small.image.width == 100)
        #expect(cache.memory.image(forKey: "big") == nil, "the thumbnail went into memory under the full-size key")
        let full = try #require(await cache.image(forKey: "big", from: .all, options: .init(), includingData: false))
        #expect(full.image.width == 640)
        // A whole decode is promoted as before.
        #expect(cache.memory.image(forKey: "big")?.width == 640)
        // As is a query that asks for nothing smaller than the image.
        await cache.clearMemory()
        _ = await cache.image(forKey: "big", from: .all, options: ImageDecodingOptions(maxPixelSize: 4000), includingData: false)
        #expect(cache.memory.image(forKey: "big") == nil, "a size limit is a reduced query whatever the image's size")
    }

    /// Nuke's rule: a shared load runs at the priority of its most urgent caller. A normal
    /// caller that joins a queued low-priority load raises it to normal, and there it keeps its
    /// place by arrival: before a normal load queued after it.
    @Test(.timeLimit(.minutes(1))) func aNormalCallerJoiningALowLoadRaisesIt() async throws {
        var configuration = HTTPImageLoader.Configuration()
        configuration.maximumConcurrentDownloads = 1
        let h = try await ManagerHarness(loaderConfiguration: configuration)
        h.server.route("/block", .delayed(.milliseconds(600), .respond(body: ManagerHarness.png)))
        for path in ["/x", "/y"] { h.server.route(path, .respond(body: ManagerHarness.png)) }
        let blocker = Task { try await h.manager.image(for: h.url("/block")) }
        while h.server.requestCount("/block") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let x = Task { try await h.manager.image(for: h.url("/x"), options: .lowPriority) }
        while h.loader.liveTransferCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        let y = Task { try await h.manager.image(for: h.url("/y")) }
        while h.loader.liveTransferCount < 3 { try await Task.sleep(for: .milliseconds(5)) }
        let joining = Task { try await h.manager.image(for: h.url("/x")) }
        try await Task.sleep(for: .milliseconds(50))
        for task in [blocker, x, y, joining] { _ = try await task.value }
        #expect(h.server.requestOrder == ["/block", "/x", "/y"])
        #expect(h.server.requestCount("/x") == 1, "the joining caller shared the transfer")
        await h.finish()
    }

    /// The `.response` a loader streams is the response as the modifier made it: the value the
    /// pipeline acted on, for every loader (a file loader's too, not only the HTTP loader's).
    @Test func theResponseEventShowsTheModifiedResponse() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        var request = ImageLoaderRequest(url: h.url("/a.png"))
        request.responseModifier = { response in
            var response = response
            response.headers["x-modified"] = "yes"
            return response
        }
        var seen: ImageLoaderResponse?
        for try await event in h.loader.load(request) { if case .response(let r) = event { seen = r } }
        #expect(seen?.headers["x-modified"] == "yes")

        // A file read: the manager applies the context's modifier for a loader that does not.
        let file = h.directory.url.appendingPathComponent("a.png")
        try ManagerHarness.png.write(to: file)
        var context = ImageContext()
        context.responseModifier = { _ in nil }
        await #expect(throws: ImageError.self) { _ = try await h.manager.image(for: file, options: .fromLoaderOnly, context: context) }
        await h.finish()
    }
}

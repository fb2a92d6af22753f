import Foundation
import Testing
@testable import WebImage

/// `ImageManager.data(for:)` (Nuke's `ImagePipeline.data(for:)`): the original bytes through
/// the disk cache, shared with other callers and with image loads, never decoded.
@Suite(.serialized) struct LoadDataTests {
    @Test func theServersBytesThenTheDisksWithoutADecode() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let url = h.url("/a.png")
        #expect(try await h.manager.data(for: url) == ManagerHarness.png)
        await h.manager.waitForPendingStores()
        #expect(await h.cache.data(forKey: url.absoluteString) == ManagerHarness.png, "stored under the original's key")
        #expect(await h.cache.containsImage(forKey: url.absoluteString, in: .memory) == .none, "nothing decoded into memory")
        #expect(try await h.manager.data(for: url) == ManagerHarness.png)
        #expect(h.server.requestCount("/a.png") == 1, "the second call read the disk")
        // A transformer or thumbnail in the context does not change the bytes' key.
        var context = ImageContext()
        context.thumbnailPixelSize = PixelSize(width: 8, height: 8)
        #expect(try await h.manager.data(for: url, context: context) == ManagerHarness.png)
        #expect(h.server.requestCount("/a.png") == 1)
        #expect(h.manager.pipeline.backlog.bytes == 0, "the body left the decode backlog")
        await h.finish()
    }

    @Test func callersAndAnImageLoadShareOneTransfer() async throws {
        let h = try await ManagerHarness()
        h.server.route("/slow.png", .delayed(.milliseconds(300), .respond(body: ManagerHarness.png)))
        let url = h.url("/slow.png")
        let manager = h.manager
        let image = Task { try await manager.image(for: url) }
        try await Task.sleep(for: .milliseconds(50))
        let bytes = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<5 { group.addTask { try await manager.data(for: url) } }
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }
        #expect(bytes.count == 5 && bytes.allSatisfy { $0 == ManagerHarness.png })
        #expect(try await image.value.bitmap.width == 64)
        #expect(h.server.requestCount("/slow.png") == 1)
        await h.finish()
    }

    @Test func cacheOnlyFailuresAndTheBlacklist() async throws {
        let h = try await ManagerHarness()
        h.server.route("/missing.png", .respond(status: 404, body: Data("no".utf8)))
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        await #expect(throws: ImageError.notInCache(key: h.url("/a.png").absoluteString)) {
            try await h.manager.data(for: h.url("/a.png"), options: .fromCacheOnly)
        }
        #expect(h.server.requestCount("/a.png") == 0)
        let missing = h.url("/missing.png")
        await #expect(throws: ImageError.badStatusCode(404, url: missing)) { try await h.manager.data(for: missing) }
        await #expect(throws: ImageError.blacklistedURL(missing)) { try await h.manager.data(for: missing) }
        #expect(h.server.requestCount("/missing.png") == 1)
        await #expect(throws: ImageError.badStatusCode(404, url: missing)) { try await h.manager.data(for: missing, options: .retryFailed) }
        #expect(h.server.requestCount("/missing.png") == 2)
        await h.finish()
    }

    @Test func refreshingRevalidatesAndA304GivesTheCachedBytes() async throws {
        let h = try await ManagerHarness()
        h.server.route("/e.png", .etag("\"v1\"", body: ManagerHarness.png))
        let url = h.url("/e.png")
        #expect(try await h.manager.data(for: url, options: .waitStoreCache) == ManagerHarness.png)
        #expect(try await h.manager.data(for: url, options: .refreshCached) == ManagerHarness.png)
        #expect(h.server.requestCount("/e.png") == 2)
        #expect(h.server.headers(of: "/e.png").contains { $0.0.lowercased() == "if-none-match" && $0.1 == "\"v1\"" })
        await h.finish()
    }

    @Test(.timeLimit(.minutes(2))) func aCancelledCallEndsAtOnceAndItsTransferStops() async throws {
        let h = try await ManagerHarness()
        h.server.route("/stall.png", .stallAfter(bytes: 10, body: ManagerHarness.png))
        let task = Task { try await h.manager.data(for: h.url("/stall.png")) }
        for _ in 0..<200 where h.loader.liveTransferCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        for _ in 0..<200 where h.loader.liveTransferCount > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(h.loader.liveTransferCount == 0)
        #expect(await h.manager.inFlightCounts().loads == 0)
        await h.finish()
    }
}

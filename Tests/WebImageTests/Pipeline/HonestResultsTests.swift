import Foundation
import Testing
@testable import WebImage

/// A load's total deadline, and stores that fail being reported rather than only logged.
@Suite struct HonestResultsTests {
    /// A manager over a cache whose disk directory cannot be made (a file stands in its way).
    func unwritableHarness() async throws -> ManagerHarness {
        let directory = TemporaryDirectory()
        let blocker = directory.url.appendingPathComponent("file")
        try Data([0]).write(to: blocker)
        let cache = ImageCache(namespace: "x", directory: blocker.appendingPathComponent("cache"), config: .init(cleanupInterval: nil))
        let h = try await ManagerHarness(cache: cache)
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        return h
    }

    @Test func aStoreThatFailsIsInTheResultOfACallThatWaitsForIt() async throws {
        let h = try await unwritableHarness()
        let url = h.url("/a.png")
        let waited = try await h.manager.result(for: url, options: .waitStoreCache)
        #expect(waited.image.width == 64, "the caller still gets the image")
        let failure = try #require(waited.storeFailure)
        guard case .cacheWriteFailed = failure else { Issue.record("\(failure)"); return }
        // A call that does not wait is told nothing (the write runs after it returned).
        let background = try await h.manager.result(for: h.url("/a.png?2"))
        #expect(background.storeFailure == nil)
        // A cache that works reports nothing.
        let good = try await ManagerHarness()
        good.server.route("/a.png", .respond(body: ManagerHarness.png))
        #expect(try await good.manager.result(for: good.url("/a.png"), options: .waitStoreCache).storeFailure == nil)
        await good.finish()
        await h.finish()
    }

    @Test func thePrefetcherCountsAnImageItCouldNotStoreAsSkipped() async throws {
        let h = try await unwritableHarness()
        let prefetcher = ImagePrefetcher(manager: h.manager)
        var last: PrefetchProgress?
        for await progress in prefetcher.prefetch([h.url("/a.png")]) { last = progress }
        #expect(last.map { [$0.finished, $0.skipped, $0.total] } == [0, 1, 1], "\(String(describing: last))")
        await h.finish()
    }

    /// A body that drips 16 bytes every 0.2 s: the loader's stall timeout never fires, the load's
    /// total deadline does; the transfer stops, nothing is cached, and another caller of the same
    /// URL without a deadline is not affected.
    @Test(.timeLimit(.minutes(2))) func aLoadTimeoutEndsACallWhoseTransferDrips() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.png
        h.server.route("/drip.png", .drip(body: body, chunk: 16, interval: .milliseconds(200)))
        var bounded = ImageContext()
        bounded.loadTimeout = .milliseconds(500)
        let url = h.url("/drip.png")
        let start = ContinuousClock.now
        await #expect(throws: ImageError.timedOut(url: url)) { _ = try await h.manager.image(for: url, context: bounded) }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(450) && elapsed < .seconds(2), "\(elapsed)")
        for _ in 0..<100 where h.loader.liveTransferCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(h.loader.liveTransferCount == 0, "the transfer was left running")
        #expect(await h.cache.containsImage(forKey: url.absoluteString, in: .all) == ImageCacheType.none)
        #expect(await h.manager.isFailedURL(url) == false, "a deadline is not a permanent failure")

        // Two callers share a transfer: the one with a deadline leaves, the other goes on.
        let fast = ManagerHarness.png.prefix(200)
        h.server.route("/short.png", .drip(body: Data(fast) + body.dropFirst(200), chunk: body.count / 4, interval: .milliseconds(250)))
        let shared = h.url("/short.png")
        let patient = Task { try await h.manager.image(for: shared) }
        try await Task.sleep(for: .milliseconds(50))
        var short = ImageContext()
        short.loadTimeout = .milliseconds(200)
        await #expect(throws: ImageError.timedOut(url: shared)) { _ = try await h.manager.image(for: shared, context: short) }
        #expect(try await patient.value.width == 64)
        #expect(h.server.requestCount("/short.png") == 1)
        await h.finish()
    }
}

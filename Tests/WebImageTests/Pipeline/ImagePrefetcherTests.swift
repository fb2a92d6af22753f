import Foundation
import Testing
@testable import WebImage

/// The prefetcher (after SDWebImagePrefetcherTests): progress, skipped failures, the
/// concurrency limit, and cancellation per batch.
@Suite struct ImagePrefetcherTests {
    func drain(_ stream: AsyncStream<PrefetchProgress>) async -> [PrefetchProgress] {
        var all: [PrefetchProgress] = []
        for await progress in stream { all.append(progress) }
        return all
    }

    @Test func prefetchesIntoTheCacheAndCountsFailuresAsSkipped() async throws {
        let h = try await ManagerHarness()
        for i in 0..<5 { h.server.route("/p\(i).png", .respond(body: ManagerHarness.png)) }
        let urls = (0..<5).map { h.url("/p\($0).png") } + [h.url("/missing.png")]
        let prefetcher = ImagePrefetcher(manager: h.manager)
        let progress = await drain(prefetcher.prefetch(urls))
        #expect(progress.count == 6)
        #expect(progress.last.map { ($0.finished, $0.skipped, $0.total) } ?? (0, 0, 0) == (5, 1, 6))
        // Each report names the URL that ended it; the missing one was skipped.
        #expect(Set(progress.compactMap(\.url)) == Set(urls))
        #expect(progress.filter { !$0.urlSucceeded }.map(\.url) == [h.url("/missing.png")])
        #expect(progress.map(\.completed) == Array(1...6))
        for url in urls.prefix(5) {
            #expect(await h.cache.containsImage(forKey: url.absoluteString, in: .memory) == .memory)
        }
        #expect(await drain(prefetcher.prefetch([])) == [PrefetchProgress(finished: 0, skipped: 0, total: 0)])
        await h.finish()
    }

    @Test(.timeLimit(.minutes(1)))
    func aBatchAskedForFromACancelledTaskLoadsNothing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (manager, loader, urls) = recordingManager("c", count: 4, in: directory)
        let prefetcher = ImagePrefetcher(manager: manager)
        let maker = Task {
            while !Task.isCancelled { await Task.yield() }
            return prefetcher.prefetch(urls)
        }
        maker.cancel()
        let progress = await drain(await maker.value)
        #expect(progress.allSatisfy { $0.finished == 0 })
        #expect(loader.requests.isEmpty, "nothing was loaded")
    }

    /// A manager over a `RecordingLoader` serving `count` images named `/NAME0.png`... as
    /// `mem:` URLs, with a cache in `directory`.
    func recordingManager(_ name: String, count: Int, in directory: TemporaryDirectory, delay: Duration = .milliseconds(30),
                          hangs: Bool = false) -> (ImageManager, RecordingLoader, [URL]) {
        let bodies = Dictionary(uniqueKeysWithValues: (0..<count).map { ("/\(name)\($0).png", ManagerHarness.png) })
        let loader = RecordingLoader(bodies: bodies, delay: delay, hangs: hangs)
        let manager = ImageManager(cache: ImageCache(namespace: name, directory: directory.url.appendingPathComponent(name)),
                                   loaders: ImageLoaders([loader]))
        return (manager, loader, (0..<count).map { URL(string: "mem:/\(name)\($0).png")! })
    }

    @Test func atMostMaxConcurrentLoadsRunAtOnce() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (manager, loader, urls) = recordingManager("m", count: 12, in: directory)
        // The prefetcher is kept for the whole batch (dropping it cancels its loads).
        let prefetcher = ImagePrefetcher(manager: manager)
        _ = await drain(prefetcher.prefetch(urls))
        #expect(loader.maxConcurrent == 3 && loader.requests.count == 12)
        #expect(loader.requests.allSatisfy { $0.priority == .low })
        let (other, wide, otherURLs) = recordingManager("w", count: 12, in: directory)
        let wider = ImagePrefetcher(manager: other, maxConcurrentPrefetchCount: 6)
        _ = await drain(wider.prefetch(otherURLs))
        #expect(wide.maxConcurrent == 6)
    }

    /// SDWebImage's meaning: the limit is the prefetcher's, shared by its batches.
    @Test func theLimitBoundsThePrefetcherAsAWholeNotEachBatch() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (manager, loader, urls) = recordingManager("b", count: 16, in: directory)
        let prefetcher = ImagePrefetcher(manager: manager, maxConcurrentPrefetchCount: 2)
        async let first = drain(prefetcher.prefetch(Array(urls[0..<8])))
        async let second = drain(prefetcher.prefetch(Array(urls[8..<16])))
        let (a, b) = await (first, second)
        #expect(a.last.map { [$0.finished, $0.skipped, $0.total] } == [8, 0, 8] && b.last.map { [$0.finished, $0.skipped, $0.total] } == [8, 0, 8])
        #expect(loader.requests.count == 16)
        #expect(loader.maxConcurrent == 2, "\(loader.maxConcurrent) loads ran at once across two batches")
    }

    @Test func anEmptyBatchYieldsOneFinalValue() async {
        let values = await drain(ImagePrefetcher().prefetch([]))
        #expect(values == [PrefetchProgress(finished: 0, skipped: 0, total: 0)])
        #expect(values.last?.isComplete == true)
    }

    @Test func droppingThePrefetcherCancelsItsLoads() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (manager, loader, urls) = recordingManager("h", count: 4, in: directory, delay: .zero, hangs: true)
        var prefetcher: ImagePrefetcher? = ImagePrefetcher(manager: manager)
        let stream = prefetcher!.prefetch(urls)
        for _ in 0..<200 where loader.requests.count < 3 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(loader.requests.count == 3)
        prefetcher = nil   // the stream is kept; the prefetcher is gone
        let start = ContinuousClock.now
        let values = await drain(stream)
        #expect(ContinuousClock.now - start < .seconds(2), "the batch ended when its prefetcher went away")
        #expect(values.last?.isComplete != true)
        for _ in 0..<100 where await manager.inFlightCounts().loads > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await manager.inFlightCounts().loads == 0, "its loads were cancelled")
    }

    @Test func cancellingOneBatchLeavesTheOthers() async throws {
        let h = try await ManagerHarness()
        for i in 0..<6 { h.server.route("/s\(i).png", .delayed(.milliseconds(150), .respond(body: ManagerHarness.png))) }
        let prefetcher = ImagePrefetcher(manager: h.manager)
        let slow = (0..<3).map { h.url("/s\($0).png") }, kept = (3..<6).map { h.url("/s\($0).png") }
        let cancelled = Task { await drain(prefetcher.prefetch(slow)) }
        let survivor = Task { await drain(prefetcher.prefetch(kept)) }
        for _ in 0..<100 where (0..<3).map({ h.server.requestCount("/s\($0).png") }).reduce(0, +) == 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        let started = ContinuousClock.now
        cancelled.cancel()
        let partial = await cancelled.value
        #expect(ContinuousClock.now - started < .milliseconds(100), "the cancelled batch ended at once")
        #expect(partial.isEmpty, "nothing of the cancelled batch finished: \(partial)")
        #expect(await survivor.value.last.map { [$0.finished, $0.skipped, $0.total] } == [3, 0, 3])
        // The cancelled loads stored nothing; the survivor's are cached.
        try await Task.sleep(for: .milliseconds(200))
        for url in slow { #expect(await h.cache.containsImage(forKey: url.absoluteString, in: .all) == ImageCacheType.none) }
        for url in kept { #expect(await h.cache.containsImage(forKey: url.absoluteString, in: .memory) == .memory) }
        await h.finish()
    }

    @Test func cancelPrefetchingCancelsEveryBatch() async throws {
        let h = try await ManagerHarness()
        h.server.route("/stall.png", .stallAfter(bytes: 10, body: ManagerHarness.png))
        let prefetcher = ImagePrefetcher(manager: h.manager)
        let a = Task { await drain(prefetcher.prefetch([h.url("/stall.png")])) }
        let b = Task { await drain(prefetcher.prefetch([h.url("/stall.png"), h.url("/stall.png")])) }
        try await Task.sleep(for: .milliseconds(100))
        prefetcher.cancelPrefetching()
        let (ra, rb) = await (a.value, b.value)
        #expect(ra.last?.isComplete != true && rb.last?.isComplete != true)
        for _ in 0..<50 where prefetcher.runningBatchCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(prefetcher.runningBatchCount == 0)
        await h.finish()
    }

    @Test func optionsAndContextApplyToEveryURL() async throws {
        let h = try await ManagerHarness()
        for i in 0..<3 { h.server.route("/t\(i).png", .respond(body: ManagerHarness.png)) }
        let context = ImageContext(transformer: ResizingTransformer(width: 10, height: 10))
        let prefetcher = ImagePrefetcher(manager: h.manager, options: [.lowPriority, .waitStoreCache], context: context)
        let urls = (0..<3).map { h.url("/t\($0).png") }
        _ = await drain(prefetcher.prefetch(urls))
        for url in urls {
            let key = h.manager.cacheKey(for: url, context: context)
            #expect(key.contains("ResizingTransformer"))
            #expect(await h.cache.containsImage(forKey: key, in: .all) == .all)
        }
        await h.finish()
    }
}

import Foundation
import Testing
@testable import WebImage

/// The prefetcher's disk-only destination, pausing, and per-batch options and context.
@Suite(.timeLimit(.minutes(1))) struct PrefetchDestinationTests {
    func drain(_ stream: AsyncStream<PrefetchProgress>) async -> [PrefetchProgress] {
        var all: [PrefetchProgress] = []
        for await progress in stream { all.append(progress) }
        return all
    }

    /// A manager whose only coder counts its decodes, over a `RecordingLoader` of `count` PNGs.
    func countingManager(_ directory: TemporaryDirectory, count: Int, delay: Duration = .zero)
        -> (ImageManager, CountingCoder, RecordingLoader, [URL]) {
        let coder = CountingCoder()
        let coders = ImageCoders([coder])
        let bodies = Dictionary(uniqueKeysWithValues: (0..<count).map { ("/d\($0).png", ManagerHarness.png) })
        let loader = RecordingLoader(bodies: bodies, delay: delay)
        let cache = ImageCache(namespace: "prefetch", directory: directory.url.appendingPathComponent("cache"),
                               config: .init(cleanupInterval: nil), coders: coders)
        let manager = ImageManager(cache: cache, loaders: ImageLoaders([loader]), coders: coders)
        return (manager, coder, loader, (0..<count).map { URL(string: "mem:/d\($0).png")! })
    }

    @Test func prefetchingToDiskOnlyDecodesNothing() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let (manager, coder, loader, urls) = countingManager(directory, count: 8)
        let prefetcher = ImagePrefetcher(manager: manager, destination: .diskCache)
        let progress = await drain(prefetcher.prefetch(urls))
        #expect(progress.last?.finished == 8 && progress.last?.skipped == 0)
        #expect(coder.decodes.load(ordering: .relaxed) == 0, "disk only: no decode")
        let cache = try #require(manager.cache as? ImageCache)
        for url in urls {
            #expect(await cache.containsImage(forKey: url.absoluteString, in: .all) == .disk, "on disk, not in memory")
        }
        // A later load finds the bytes on disk and decodes them once.
        let result = try await manager.result(for: urls[0])
        #expect(result.cacheType == .disk && coder.decodes.load(ordering: .relaxed) == 1)
        #expect(loader.requests.count == 8)
        // The decoding destination decodes each image.
        let otherDirectory = TemporaryDirectory(); defer { otherDirectory.remove() }
        let (other, counting, _, otherURLs) = countingManager(otherDirectory, count: 3)
        let decoding = ImagePrefetcher(manager: other)   // kept: dropping a prefetcher cancels its batches
        _ = await drain(decoding.prefetch(otherURLs))
        #expect(counting.decodes.load(ordering: .relaxed) == 3)
    }

    @Test func aFailedDiskStoreIsSkipped() async throws {
        let bodies = ["/a.png": ManagerHarness.png]
        let loader = RecordingLoader(bodies: bodies)
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let failing = InstrumentedCache(base: ImageCache(namespace: "f", directory: directory.url), failsStores: true)
        let manager = ImageManager(cache: failing, loaders: ImageLoaders([loader]))
        let prefetcher = ImagePrefetcher(manager: manager, destination: .diskCache)
        let progress = await drain(prefetcher.prefetch([URL(string: "mem:/a.png")!]))
        #expect(progress.last?.skipped == 1 && progress.last?.urlSucceeded == false)
    }

    @Test func pausingHoldsNewLoadsAndResumesThemInOrder() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let (manager, _, loader, urls) = countingManager(directory, count: 6, delay: .milliseconds(20))
        let prefetcher = ImagePrefetcher(manager: manager, maxConcurrentPrefetchCount: 1)
        prefetcher.isPaused = true
        let stream = prefetcher.prefetch(urls)
        try await Task.sleep(for: .milliseconds(150))
        #expect(loader.requests.isEmpty, "paused: nothing started")
        prefetcher.isPaused = false
        var reports: [PrefetchProgress] = []
        for await progress in stream {
            reports.append(progress)
            if reports.count == 2 {
                // Paused mid-batch: the running load finishes, the next one waits.
                prefetcher.isPaused = true
                let started = loader.requests.count
                try await Task.sleep(for: .milliseconds(150))
                #expect(loader.requests.count <= started + 1 && loader.requests.count <= 3)
                prefetcher.isPaused = false
            }
        }
        #expect(reports.count == 6 && reports.last?.finished == 6)
        #expect(loader.requests.map(\.url) == urls, "started in the batch's order")
        #expect(reports.compactMap(\.url) == urls)
    }

    @Test func aPausedBatchCanBeCancelled() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let (manager, _, loader, urls) = countingManager(directory, count: 4)
        let prefetcher = ImagePrefetcher(manager: manager)
        prefetcher.isPaused = true
        let stream = prefetcher.prefetch(urls)
        let task = Task { await drain(stream) }
        try await Task.sleep(for: .milliseconds(50))
        prefetcher.cancelPrefetching()
        let reports = await task.value
        #expect(reports.isEmpty && loader.requests.isEmpty)
        try await waitUntil(prefetcher.runningBatchCount == 0)
    }

    @Test func aBatchTakesItsOwnOptionsAndContext() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let (manager, _, loader, urls) = countingManager(directory, count: 2)
        let prefetcher = ImagePrefetcher(manager: manager)
        var context = ImageContext()
        context.thumbnailPixelSize = PixelSize(width: 8, height: 8)
        _ = await drain(prefetcher.prefetch([urls[0]], options: .highPriority, context: context))
        #expect(loader.requests.first?.priority == .high, "the batch's options replace the prefetcher's .lowPriority")
        let cache = try #require(manager.cache as? ImageCache)
        #expect(cache.cachedImage(forKey: manager.cacheKey(for: urls[0], context: context))?.width == 8)
        _ = await drain(prefetcher.prefetch([urls[1]]))
        #expect(loader.requests.last?.priority == .low)
    }
}

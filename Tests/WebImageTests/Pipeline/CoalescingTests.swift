import Foundation
import Testing
@testable import WebImage

/// Shared work and cancellation (after Nuke's coalescing and cancellation tests and
/// SDWebImageManagerTests), with request counts asserted against the in-process server.
@Suite struct CoalescingTests {
    /// Cancels the task running `body` after `delay`; returns how long the task took to end after
    /// the cancel and what it ended with.
    func cancel<T: Sendable>(after delay: Duration, when ready: @Sendable () -> Bool = { true },
                             _ body: @escaping @Sendable () async throws -> T) async -> (Duration, (any Error)?) {
        let task = Task { try await body() }
        try? await Task.sleep(for: delay)
        let deadline = ContinuousClock.now + .seconds(5)
        while !ready(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        let start = ContinuousClock.now
        task.cancel()
        let result = await task.result
        if case .failure(let error) = result { return (ContinuousClock.now - start, error) }
        return (ContinuousClock.now - start, nil)
    }

    /// A work that ended is never joined again, however it was found while it ran (the table's
    /// last key, its key, its alias): each call after the end loads afresh.
    @Test func aCallAfterTheWorkEndedLoadsAgain() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .delayed(.milliseconds(50), .respond(body: ManagerHarness.png)))
        let manager = h.manager, url = h.url("/a.png")
        // Two callers, the second joining the first's work; then the work's end (a work stays
        // joinable until its last step, a store, is done).
        func twoCallers(_ options: ImageOptions) async throws {
            async let first = manager.image(for: url, options: options)
            for _ in 0..<400 where manager.pipeline.works.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
            async let second = manager.image(for: url, options: options)
            _ = try await (first, second)
            await manager.waitForPendingStores()
            for _ in 0..<400 where !manager.pipeline.works.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            #expect(manager.pipeline.works.isEmpty)
        }
        // With options: found by the work's key.
        try await twoCallers(.fromLoaderOnly)
        try await twoCallers(.fromLoaderOnly)
        #expect(h.server.requestCount("/a.png") == 2)
        // Plain calls (found by their alias), with the caches emptied before each pair.
        await h.cache.clear(.all)
        try await twoCallers([])
        await h.cache.clear(.all)
        try await twoCallers([])
        #expect(h.server.requestCount("/a.png") == 4)
        await h.finish()
    }

    @Test func concurrentCallersOfOneURLShareOneTransfer() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .delayed(.milliseconds(150), .respond(body: ManagerHarness.png)))
        let manager = h.manager, url = h.url("/a.png")
        let widths = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 { group.addTask { try await manager.image(for: url).width } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(widths == Array(repeating: 64, count: 50))
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    @Test func differentTransformersShareTheTransferButNotTheWork() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .delayed(.milliseconds(600), .respond(body: ManagerHarness.png)))
        let manager = h.manager, url = h.url("/a.png")
        async let flipped = manager.image(for: url, context: ImageContext(transformer: FlippingTransformer(horizontal: true, vertical: false)))
        async let small = manager.image(for: url, context: ImageContext(transformer: ResizingTransformer(width: 8, height: 8)))
        async let plain = manager.image(for: url)
        // While the transfer is held: three works (one per transformer key), one download. Polled
        // (a fixed wait failed when the suite's other tests kept the works from their transfer).
        var counts = await manager.inFlightCounts()
        for _ in 0..<100 where !(counts.loads == 3 && counts.downloads == 1) {
            try await Task.sleep(for: .milliseconds(5))
            counts = await manager.inFlightCounts()
        }
        #expect(counts.loads == 3 && counts.downloads == 1, "\(counts)")
        let (a, b, c) = try await (flipped, small, plain)
        #expect(a.width == 64 && b.width == 8 && c.width == 64)
        #expect(a.bitmap != c.bitmap, "the flipped call got the plain work's image")
        #expect(a.bitmap[0, 0] == c.bitmap[63, 0] && a.bitmap[63, 47] == c.bitmap[0, 47], "each work ran its own transformer")
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    /// A harness serving /a.png, and a context whose cache takes `delay` for each memory store.
    private func harnessWithSlowMemoryStore(_ delay: Duration) async throws -> (ManagerHarness, ImageContext) {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        var context = ImageContext()
        context.cache = InstrumentedCache(base: h.cache, memoryStoreDelay: delay)
        return (h, context)
    }

    /// The callers get the image without waiting for the memory store; the work stays in flight
    /// until it is done, and a call made meanwhile (as soon as one returns) gets the image as a
    /// memory hit, never a second trip to the disk or the network. Once the store is done the
    /// image is an ordinary memory hit.
    @Test func callersGetTheImageBeforeTheMemoryStoreAndLaterCallsGetAMemoryHit() async throws {
        let (h, context) = try await harnessWithSlowMemoryStore(.milliseconds(600))
        let manager = h.manager, url = h.url("/a.png")
        let start = ContinuousClock.now
        #expect(try await manager.result(for: url, context: context).cacheType == ImageCacheType.none)
        #expect(ContinuousClock.now - start < .milliseconds(400), "the caller waited for the memory store")
        // The store is still running: the work stays in flight, and a caller arriving now gets a memory hit.
        #expect(await manager.inFlightCounts().loads == 1)
        let again = ContinuousClock.now
        #expect(try await manager.result(for: url, context: context).cacheType == .memory)
        #expect(ContinuousClock.now - again < .milliseconds(300))
        #expect(h.server.requestCount("/a.png") == 1)
        // Once stored, the work is gone and the image is a memory hit.
        let deadline = ContinuousClock.now + .seconds(5)
        while await manager.inFlightCounts().loads > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(try await manager.result(for: url, context: context).cacheType == .memory)
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    /// With the library's own cache, the image is in memory before any caller is resumed: a
    /// call that cannot join the load (a plain call after a progressive one, whose works
    /// differ) made as soon as the stream ends is a memory hit, never a second download
    /// (it was, when the callers were resumed before the memory store).
    @Test func aCallThatCannotJoinFindsTheImageInMemoryAsSoonAsTheLoadReturns() async throws {
        let directory = TemporaryDirectory("memory-first")
        defer { directory.remove() }
        let bodies = Dictionary(uniqueKeysWithValues: (0..<200).map { ("/\($0).png", ManagerHarness.png) })
        let loader = RecordingLoader(bodies: bodies)
        let cache = ImageCache(namespace: "test", directory: directory.url.appendingPathComponent("cache"),
                               config: .init(cleanupInterval: nil))
        let manager = ImageManager(cache: cache, loaders: ImageLoaders([loader]))
        var misses = 0
        for index in 0..<200 {
            let url = URL(string: "mem://host/\(index).png")!
            for try await _ in manager.events(for: url, options: .progressiveLoad) {}
            if try await manager.result(for: url).cacheType != .memory { misses += 1 }
        }
        #expect(misses == 0)
        #expect(loader.requests.count == 200)
        await manager.waitForPendingStores()
    }

    /// The disk write is registered before the caller is resumed: a wait that starts as soon as
    /// the load returns (a command-line tool about to exit) cannot miss it, even while a slow
    /// memory store still runs before the write begins.
    @Test func waitForPendingStoresSeesTheWriteOfALoadThatJustReturned() async throws {
        let (h, context) = try await harnessWithSlowMemoryStore(.milliseconds(400))
        for index in 0..<3 {
            let url = h.url("/a.png?\(index)")
            _ = try await h.manager.image(for: url, context: context)
            await h.manager.waitForPendingStores()
            #expect(await h.cache.disk.contains(url.absoluteString), "the disk write of load \(index) was missed")
        }
        await h.finish()
    }

    @Test func waitStoreCacheCallersWaitForTheStores() async throws {
        let (h, context) = try await harnessWithSlowMemoryStore(.milliseconds(300))
        let start = ContinuousClock.now
        _ = try await h.manager.image(for: h.url("/a.png"), options: .waitStoreCache, context: context)
        #expect(ContinuousClock.now - start >= .milliseconds(300))
        #expect(await h.manager.inFlightCounts().loads == 0)
        #expect(h.cache.memory.contains(h.url("/a.png").absoluteString))
        await h.finish()
    }

    @Test func aLateCallerJoinsTheWorkInFlight() async throws {
        let h = try await ManagerHarness()
        h.server.route("/slow.png", .drip(body: ManagerHarness.png, chunk: 1000, interval: .milliseconds(40)))
        let manager = h.manager, url = h.url("/slow.png")
        let first = Task { try await manager.image(for: url) }
        try await Task.sleep(for: .milliseconds(120))
        let late = try await manager.image(for: url)
        #expect(try await first.value.width == late.width)
        #expect(h.server.requestCount("/slow.png") == 1)
        await h.finish()
    }

    @Test func cancellingOneCallerLeavesTheOtherAndTheTransfer() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.jpeg
        h.server.route("/slow.png", .drip(body: body, chunk: body.count / 10 + 1, interval: .milliseconds(40)))
        let manager = h.manager, url = h.url("/slow.png")
        let survivor = Task { try await manager.image(for: url) }
        let (elapsed, error) = await cancel(after: .milliseconds(100)) { try await manager.image(for: url) }
        #expect(error is CancellationError)
        #expect(elapsed < .milliseconds(100))
        #expect(try await survivor.value.width == 640)
        #expect(h.server.requestCount("/slow.png") == 1)
        await h.finish()
    }

    @Test func cancellingTheLastCallerAbortsTheTransfer() async throws {
        let h = try await ManagerHarness()
        h.server.route("/stall.png", .stallAfter(bytes: 100, body: ManagerHarness.png))
        let manager = h.manager, url = h.url("/stall.png")
        let closesBefore = h.server.connectionCloses.count
        let other = Task { try await manager.image(for: url) }
        let loader = h.loader
        let (_, error) = await cancel(after: .milliseconds(50), when: { loader.liveTransferCount == 1 }) {
            try await manager.image(for: url)
        }
        #expect(error is CancellationError)
        #expect(h.loader.liveTransferCount == 1, "the other caller still waits")
        other.cancel()
        await #expect(throws: CancellationError.self) { _ = try await other.value }
        let cancelled = ContinuousClock.now
        while h.server.connectionCloses.count == closesBefore, ContinuousClock.now - cancelled < .seconds(2) {
            try await Task.sleep(for: .milliseconds(5))
        }
        let closed = try #require(h.server.connectionCloses.last)
        #expect(closed - cancelled < .milliseconds(100), "the server saw the close \(closed - cancelled) after the cancel")
        for _ in 0..<100 where h.loader.liveTransferCount > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(h.loader.liveTransferCount == 0)
        #expect(await manager.inFlightCounts() == (0, 0))
        await h.finish()
    }

    @Test func aTaskCancelledBeforeItStartsDoesNothing() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let cache = InstrumentedCache(base: h.cache)
        var context = ImageContext()
        context.cache = cache
        let manager = h.manager, url = h.url("/a.png")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await manager.image(for: url, context: context)
        }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(cache.queries == 0 && h.server.requestCount("/a.png") == 0)
        await h.finish()
    }

    typealias Collected = (progress: [ImageProgress], previews: [PartialImage], result: ImageResult?)

    static func collect(_ manager: ImageManager, _ url: URL, _ context: ImageContext) async throws -> Collected {
        var progress: [ImageProgress] = [], previews: [PartialImage] = [], result: ImageResult?
        for try await event in manager.events(for: url, options: .progressiveLoad, context: context) {
            switch event {
            case .progress(let p): progress.append(p)
            case .preview(let p): previews.append(p)
            case .cached: break
            case .finished(let r): result = r
            }
        }
        return (progress, previews, result)
    }

    @Test func everyCallerSeesEveryProgressEventAndPreview() async throws {
        let h = try await ManagerHarness(loaderConfiguration: {
            var c = HTTPImageLoader.Configuration()
            c.minimumProgressInterval = .milliseconds(10)
            return c
        }())
        let body = ManagerHarness.progressiveJPEG
        // The answer waits 300 ms, so that both callers have joined before its first byte.
        h.server.route("/p.jpg", .delayed(.milliseconds(300), .drip(body: body, chunk: max(1, body.count / 12), interval: .milliseconds(40))))
        let manager = h.manager, url = h.url("/p.jpg")
        let context: ImageContext = {
            var context = ImageContext()
            context.previewInterval = .zero
            return context
        }()
        async let a = Self.collect(manager, url, context)
        async let b = Self.collect(manager, url, context)
        let (first, second) = try await (a, b)
        for run in [first, second] {
            #expect(run.result?.image.width == 512)
            #expect(run.progress.count >= 4)
            #expect(run.progress.last?.receivedBytes == Int64(body.count))
            #expect(run.previews.count >= 2)
            #expect(run.previews.allSatisfy { $0.image.width == 512 && $0.scans >= 1 })
        }
        // Both callers saw the same sequence: the same byte counts, the same previews. A work does
        // not replay its events, so a caller that joined late (a CI machine once delayed the
        // second past the first event) sees the end of the other's sequence; nothing in between
        // may be missing.
        let (earlier, later) = first.progress.count >= second.progress.count ? (first, second) : (second, first)
        #expect(Array(earlier.progress.map(\.receivedBytes).suffix(later.progress.count)) == later.progress.map(\.receivedBytes))
        #expect(Array(earlier.previews.map(\.scans).suffix(later.previews.count)) == later.previews.map(\.scans))
        #expect(Array(earlier.previews.map(\.rowsDecoded).suffix(later.previews.count)) == later.previews.map(\.rowsDecoded))
        #expect(later.progress.count >= earlier.progress.count - 1, "the later caller missed more than the first event")
        #expect(h.server.requestCount("/p.jpg") == 1)
        await h.finish()
    }

    @Test func tenThousandCallsOnAHundredURLs() async throws {
        let h = try await ManagerHarness()
        for i in 0..<100 { h.server.route("/i\(i).png", .delayed(.milliseconds(20), .respond(body: ManagerHarness.png))) }
        let manager = h.manager
        let urls = (0..<100).map { h.url("/i\($0).png") }
        let done = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<10_000 { group.addTask { try await manager.image(for: urls[i % 100]).width } }
            return try await group.reduce(0) { $0 + ($1 == 64 ? 1 : 0) }
        }
        #expect(done == 10_000)
        #expect((0..<100).map { h.server.requestCount("/i\($0).png") } == Array(repeating: 1, count: 100))
        await h.finish()
    }

    @Test(.timeLimit(.minutes(2))) func cancelAllEndsEveryCaller() async throws {
        let h = try await ManagerHarness()
        h.server.route("/stall.png", .stallAfter(bytes: 10, body: ManagerHarness.png))
        let manager = h.manager, url = h.url("/stall.png")
        let tasks = (0..<3).map { _ in Task { try await manager.image(for: url) } }
        try await Task.sleep(for: .milliseconds(100))
        await manager.cancelAll()
        for task in tasks { await #expect(throws: CancellationError.self) { _ = try await task.value } }
        await h.finish()
    }

    @Test(.timeLimit(.minutes(2))) func aLoaderThatNeverFinishesStillEndsOnCancel() async throws {
        let loader = RecordingLoader(bodies: [:], hangs: true)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let manager = ImageManager(cache: ImageCache(namespace: "t", directory: directory.url), loaders: ImageLoaders([loader]))
        let (elapsed, error) = await cancel(after: .milliseconds(50), when: { loader.requests.count == 1 }) {
            try await manager.image(for: URL(string: "mem:/x.png")!)
        }
        #expect(error is CancellationError && elapsed < .milliseconds(100))
        #expect(loader.requests.count == 1)
    }

    /// The shared work checks cancellation after every stage: a transform whose only caller left
    /// while it ran leaves nothing in either cache.
    @Test func aTransformWhoseCallersLeftIsNotStored() async throws {
        struct SlowTransformer: ImageTransformer {
            var key: String { "SlowFlip" }
            func transform(_ image: Image) throws -> Image {
                Thread.sleep(forTimeInterval: 0.4)
                return try FlippingTransformer(horizontal: true, vertical: false).transform(image)
            }
        }
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let url = h.url("/a.png"), context = ImageContext(transformer: SlowTransformer())
        let key = h.manager.cacheKey(for: url, context: context)
        let (_, error) = await cancel(after: .milliseconds(150)) {
            try await h.manager.image(for: url, options: .fromLoaderOnly, context: context)
        }
        #expect(error is CancellationError)
        // The transform finishes on its own; give the work time to store, if it (wrongly) would.
        try await Task.sleep(for: .milliseconds(600))
        await h.manager.waitForPendingStores()
        #expect(await h.cache.containsImage(forKey: key, in: .all) == ImageCacheType.none, "the transformed image was stored")
        #expect(await h.manager.inFlightCounts().loads == 0)
        await h.finish()
    }

    @Test(.timeLimit(.minutes(2))) func cancellingDuringEachStageEndsTheCallPromptly() async throws {
        struct SlowCoder: ImageCoder {
            func canDecode(_ data: Data) -> Bool { true }
            func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
                Thread.sleep(forTimeInterval: 0.6)
                return try PNGCoder().decode(data, options: options)
            }
            func canEncode(_ format: ImageFormat) -> Bool { false }
            func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
                throw ImageError.encodingFailed(format, reason: "no")
            }
        }
        struct SlowTransformer: ImageTransformer {
            var key: String { "Slow" }
            func transform(_ image: Image) throws -> Image {
                Thread.sleep(forTimeInterval: 0.6)
                return image
            }
        }
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        h.server.route("/stall.png", .stallAfter(bytes: 10, body: ManagerHarness.png))
        let manager = h.manager
        var stages: [(String, URL, ImageOptions, ImageContext)] = []
        var query = ImageContext(); query.cache = InstrumentedCache(base: h.cache, queryDelay: .seconds(5))
        stages.append(("query", h.url("/a.png"), [], query))
        stages.append(("download", h.url("/stall.png"), [], ImageContext()))
        var decode = ImageContext(); decode.coder = SlowCoder()
        stages.append(("decode", h.url("/a.png"), .fromLoaderOnly, decode))
        stages.append(("transform", h.url("/a.png"), .fromLoaderOnly, ImageContext(transformer: SlowTransformer())))
        var store = ImageContext(); store.cache = InstrumentedCache(base: h.cache, storeDelay: .seconds(5))
        stages.append(("store", h.url("/a.png"), [.fromLoaderOnly, .waitStoreCache], store))
        for (stage, url, options, context) in stages {
            let (elapsed, error) = await cancel(after: .milliseconds(200)) {
                try await manager.image(for: url, options: options, context: context)
            }
            #expect(error is CancellationError, "\(stage): \(String(describing: error))")
            #expect(elapsed < .milliseconds(150), "\(stage) took \(elapsed) to end after the cancel")
        }
        await h.finish()
    }
}

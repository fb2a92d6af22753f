import Foundation
import Synchronization
import Testing
@testable import WebImage

/// A call's deadline is a transition of its subscription: fired by the manager's one timer
/// (`Deadlines`), it takes that one caller out of the shared work with `ImageError.timedOut`,
/// and the work goes on for the others, each of which gets its own outcome.
@Suite struct DeadlineTests {
    /// The timer fires deadlines in the order they come, whatever order they were scheduled in;
    /// a cancelled one never fires, and cancelling tells whether it had.
    @Test(.timeLimit(.minutes(1))) func theTimerFiresInOrderAndACancelledDeadlineNever() async throws {
        let deadlines = Deadlines()
        let fired = Mutex<[Int]>([])
        let start = ContinuousClock.now
        for (label, offset) in [(3, 300), (1, 100), (4, 400), (2, 200)] {
            _ = deadlines.schedule(at: start + .milliseconds(offset)) { fired.withLock { $0.append(label) } }
        }
        let cancelled = deadlines.schedule(at: start + .milliseconds(150)) { fired.withLock { $0.append(99) } }
        #expect(deadlines.cancel(cancelled), "not fired yet")
        #expect(deadlines.count == 4)
        while fired.withLock({ $0.count }) < 4 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(fired.withLock { $0 } == [1, 2, 3, 4])
        #expect(ContinuousClock.now - start >= .milliseconds(400))
        #expect(deadlines.count == 0)
        // A deadline already fired: cancelling it says so.
        let late = deadlines.schedule(at: .now) {}
        while deadlines.count > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(!deadlines.cancel(late))
    }

    /// Four callers of one slow load: one without a deadline (it started the work), two that
    /// joined with deadlines of 200 and 500 ms, one cancelled at 100 ms. Each gets its own
    /// outcome at its own time, and the transfer goes on, once, for the one left.
    @Test(.timeLimit(.minutes(2))) func aDeadlineTakesOutOneJoinedCallerAndTheWorkGoesOn() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.png
        h.server.route("/slow.png", .drip(body: body, chunk: max(1, body.count / 8), interval: .milliseconds(150)))
        let url = h.url("/slow.png")
        func bounded(_ limit: Duration) -> ImageContext {
            var context = ImageContext()
            context.loadTimeout = limit
            return context
        }
        let start = ContinuousClock.now
        let patient = Task { try await h.manager.image(for: url) }
        try await Task.sleep(for: .milliseconds(30))
        let short = Task { () -> Duration in
            await #expect(throws: ImageError.timedOut(url: url)) { _ = try await h.manager.image(for: url, context: bounded(.milliseconds(200))) }
            return ContinuousClock.now - start
        }
        let longer = Task { () -> Duration in
            await #expect(throws: ImageError.timedOut(url: url)) { _ = try await h.manager.image(for: url, context: bounded(.milliseconds(500))) }
            return ContinuousClock.now - start
        }
        let cancelled = Task { try await h.manager.image(for: url, context: bounded(.seconds(30))) }
        try await Task.sleep(for: .milliseconds(100))
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
        let shortEnded = await short.value, longerEnded = await longer.value
        #expect(shortEnded >= .milliseconds(200) && shortEnded < .milliseconds(500), "\(shortEnded)")
        #expect(longerEnded >= .milliseconds(500) && longerEnded < .seconds(1), "\(longerEnded)")
        #expect(try await patient.value.width == 64)
        #expect(ContinuousClock.now - start >= .milliseconds(900), "the transfer went on to its end")
        #expect(h.server.requestCount("/slow.png") == 1)
        #expect(h.manager.pipeline.deadlines.count == 0, "the cancelled caller's deadline went with it")
        await h.finish()
    }

    /// The caller that started the work times out; one that joined without a deadline still
    /// gets the image from the same transfer. A data call's deadline works the same way.
    @Test(.timeLimit(.minutes(2))) func aDeadlineOnTheCallerThatStartedTheWorkLeavesItToTheOthers() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.png
        h.server.route("/slow.png", .drip(body: body, chunk: max(1, body.count / 6), interval: .milliseconds(120)))
        let url = h.url("/slow.png")
        var bounded = ImageContext()
        bounded.loadTimeout = .milliseconds(150)
        let starter = Task { [bounded] in try await h.manager.image(for: url, context: bounded) }
        try await Task.sleep(for: .milliseconds(40))
        var patient = ImageContext()
        patient.loadTimeout = .seconds(30)
        let joiner = Task { [patient] in try await h.manager.image(for: url, context: patient) }
        await #expect(throws: ImageError.timedOut(url: url)) { _ = try await starter.value }
        #expect(try await joiner.value.width == 64)
        #expect(h.server.requestCount("/slow.png") == 1)

        h.server.route("/slow-data.png", .drip(body: body, chunk: max(1, body.count / 6), interval: .milliseconds(120)))
        let dataURL = h.url("/slow-data.png")
        await #expect(throws: ImageError.timedOut(url: dataURL)) { _ = try await h.manager.data(for: dataURL, context: bounded) }
        #expect(h.manager.pipeline.deadlines.count == 0)
        await h.finish()
    }
}

/// A cache whose memory answers by suspending is asked by the shared work, as its first stage
/// (before it waits for admission), once for all its callers, not once by each.
@Suite struct MemoryFirstStageTests {
    @Test(.timeLimit(.minutes(1))) func theWorkAsksASuspendingMemoryOnceForEveryCaller() async throws {
        let h = try await ManagerHarness()
        let cache = InstrumentedCache(base: h.cache, queryDelay: .milliseconds(100))
        var context = ImageContext()
        context.cache = cache
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        h.server.route("/b.png", .respond(body: ManagerHarness.png))
        let url = h.url("/a.png")
        h.cache.memory.setImage(try ImageCoders.shared.decode(ManagerHarness.png), forKey: url.absoluteString)

        let results = try await withThrowingTaskGroup(of: ImageCacheType.self) { group in
            for _ in 0..<20 { group.addTask { [context] in try await h.manager.result(for: url, context: context).cacheType } }
            return try await group.reduce(into: [ImageCacheType]()) { $0.append($1) }
        }
        #expect(results.count == 20 && results.allSatisfy { $0 == .memory }, "\(results)")
        #expect(cache.queries == 1, "asked \(cache.queries) times")
        #expect(h.server.requestCount("/a.png") == 0)

        // Memory empty: the first stage misses, and the work goes on to load, once.
        let missing = h.url("/b.png")
        let widths = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { [context] in try await h.manager.image(for: missing, context: context).width } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(widths == Array(repeating: 64, count: 20))
        #expect(h.server.requestCount("/b.png") == 1)
        await h.finish()
    }
}

/// `data(for:)` and `image(for:)` of one URL at once share one transfer, and each call is
/// accounted: its own lifecycle event and its own outcome.
@Suite struct DataAndImageShareTests {
    @Test(.timeLimit(.minutes(1))) func aDataCallAndAnImageCallOfOneURLShareOneTransfer() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.png
        h.server.route("/slow.png", .drip(body: body, chunk: max(1, body.count / 4), interval: .milliseconds(100)))
        let url = h.url("/slow.png")
        let events = h.manager.lifecycleEvents()
        let finished = Mutex<[ImageCacheType]>([])
        let watcher = Task {
            for await event in events {
                if case .loadFinished(let finishedURL, let source) = event, finishedURL == url { finished.withLock { $0.append(source) } }
            }
        }
        defer { watcher.cancel() }
        async let image = h.manager.image(for: url)
        async let data = h.manager.data(for: url)
        let (width, bytes) = try await (image.width, data)
        #expect(width == 64)
        #expect(bytes == body)
        #expect(h.server.requestCount("/slow.png") == 1, "one transfer for both")
        for _ in 0..<100 where finished.withLock({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(finished.withLock { $0.count } == 2, "each call told the lifecycle watchers")
        await h.finish()
    }
}

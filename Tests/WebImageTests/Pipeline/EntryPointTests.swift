import Foundation
import Synchronization
import Testing
@testable import WebImage

/// The four public entry points through the one decision: each answers a hit, joins a call in
/// flight (plain and with options), runs, leaves when cancelled before and while it waits, and
/// ends at its deadline, with the same bookkeeping (one `loadFinished` or `loadFailed` a call).
@Suite(.serialized) struct EntryPointTests {
    enum Entry: String, CaseIterable, Sendable {
        case image, result, events, data

        /// Calls the entry point; returns the number of bytes or the image's width.
        func call(_ manager: ImageManager, _ url: URL, options: ImageOptions = [], context: ImageContext = .init()) async throws -> Int {
            switch self {
            case .image: return try await manager.image(for: url, options: options, context: context).width
            case .result: return try await manager.result(for: url, options: options, context: context).image.width
            case .events:
                for try await event in manager.events(for: url, options: options, context: context) {
                    if case .finished(let result) = event { return result.image.width }
                }
                throw CancellationError()
            case .data: return try await manager.data(for: url, options: options, context: context).count
            }
        }

        /// What a successful call gives for the harness's PNG.
        var expected: Int { self == .data ? ManagerHarness.png.count : 64 }
    }

    /// A harness whose /slow.png answers after `delay`, and its lifecycle events.
    func harness(delay: Duration = .milliseconds(300)) async throws -> (ManagerHarness, AsyncStream<LoadLifecycleEvent>) {
        let h = try await ManagerHarness()
        h.server.route("/slow.png", .delayed(delay, .respond(body: ManagerHarness.png)))
        return (h, h.manager.lifecycleEvents())
    }

    /// The calls' own outcomes among `count` lifecycle events: finished ones by source, failed ones.
    func outcomes(_ stream: AsyncStream<LoadLifecycleEvent>, calls: Int) async -> [String] {
        var seen: [String] = []
        for await event in stream {
            switch event {
            case .loadFinished(_, let source): seen.append("finished \(source)")
            case .loadFailed(_, let error): seen.append(error is CancellationError ? "cancelled" : "failed \(error)")
            default: continue
            }
            if seen.count == calls { break }
        }
        return seen.sorted()
    }

    @Test(.timeLimit(.minutes(1)), arguments: Entry.allCases)
    func runThenHit(_ entry: Entry) async throws {
        let (h, events) = try await harness(delay: .zero)
        let url = h.url("/slow.png")
        #expect(try await entry.call(h.manager, url, options: .waitStoreCache) == entry.expected)   // run
        #expect(try await entry.call(h.manager, url) == entry.expected)                               // hit
        let hit = entry == .data ? "finished disk" : "finished memory"
        #expect(await outcomes(events, calls: 2) == [hit, "finished none"].sorted())
        #expect(h.server.requestCount("/slow.png") == 1)
        await h.finish()
    }

    @Test(.timeLimit(.minutes(1)), arguments: Entry.allCases)
    func plainAndOptionedCallersJoinOneLoad(_ entry: Entry) async throws {
        let (h, events) = try await harness()
        let url = h.url("/slow.png")
        let first = Task { try await entry.call(h.manager, url) }
        try await waitUntil(h.server.requestCount("/slow.png") == 1)
        let plain = Task { try await entry.call(h.manager, url) }
        let optioned = Task { try await entry.call(h.manager, url, options: .highPriority) }
        for task in [first, plain, optioned] { #expect(try await task.value == entry.expected) }
        #expect(h.server.requestCount("/slow.png") == 1, "one load for three callers")
        #expect(await outcomes(events, calls: 3) == Array(repeating: "finished none", count: 3))
        await h.finish()
    }

    @Test(.timeLimit(.minutes(1)), arguments: Entry.allCases)
    func aCancelledCallerLeavesBeforeAndWhileItWaits(_ entry: Entry) async throws {
        let (h, events) = try await harness()
        let url = h.url("/slow.png")
        // Cancelled before the call: nothing is asked.
        let early = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await entry.call(h.manager, url)
        }
        early.cancel()
        await #expect(throws: CancellationError.self) { _ = try await early.value }
        #expect(h.server.requestCount("/slow.png") == 0)
        // Cancelled while it waits for a load another caller keeps: it leaves at once, the load goes on.
        let keeper = Task { try await entry.call(h.manager, url) }
        try await waitUntil(h.server.requestCount("/slow.png") == 1)
        let leaver = Task { try await entry.call(h.manager, url) }
        try await Task.sleep(for: .milliseconds(30))
        leaver.cancel()
        await #expect(throws: CancellationError.self) { _ = try await leaver.value }
        #expect(try await keeper.value == entry.expected)
        #expect(await outcomes(events, calls: 3) == ["cancelled", "cancelled", "finished none"])
        await h.finish()
    }

    @Test(.timeLimit(.minutes(1)))
    func aStreamMadeInACancelledTaskAsksNothingEvenBeforeItIsIterated() async throws {
        let (h, events) = try await harness()
        let url = h.url("/slow.png")
        // The stream leaves its cancelled task un-iterated: its load must still start cancelled.
        let maker = Task {
            while !Task.isCancelled { await Task.yield() }
            return h.manager.events(for: url)
        }
        maker.cancel()
        let stream = await maker.value
        #expect(await outcomes(events, calls: 1) == ["cancelled"])
        await #expect(throws: CancellationError.self) { for try await _ in stream {} }
        #expect(h.server.requestCount("/slow.png") == 0)
        await h.finish()
    }

    @Test(.timeLimit(.minutes(1)), arguments: Entry.allCases)
    func aDeadlineEndsTheCallOnce(_ entry: Entry) async throws {
        let (h, events) = try await harness(delay: .seconds(2))
        let url = h.url("/slow.png")
        var context = ImageContext()
        context.loadTimeout = .milliseconds(100)
        let start = ContinuousClock.now
        await #expect(throws: ImageError.timedOut(url: url)) { _ = try await entry.call(h.manager, url, context: context) }
        #expect(ContinuousClock.now - start < .seconds(1))
        #expect(await outcomes(events, calls: 1) == ["failed \(ImageError.timedOut(url: url))"])
        await h.finish()
    }
}

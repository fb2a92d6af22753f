import Foundation
import Testing
@testable import WebImage

/// A load runs in the task of the caller that makes it (`SharedWork.runHere`). When that caller
/// is cancelled while others wait for the same load, it leaves at once and the load goes on for
/// them in a task of its own, whatever step it was at: each test cancels the runner during one
/// step, with a second caller joined, and checks that the runner ends promptly, the second
/// caller gets the image and the server was asked once. Serialized: a slow transform blocks a
/// thread of the pool, and two at once would hold the test's own task back.
@Suite(.serialized) struct RunnerHandOffTests {
    struct SlowTransformer: ImageTransformer {
        var key: String { "SlowHandOff" }
        func transform(_ image: Image) throws -> Image {
            Thread.sleep(forTimeInterval: 0.35)
            return try FlippingTransformer(horizontal: true, vertical: false).transform(image)
        }
    }

    /// (A decode and a transform that may take long run in the same task of their own, which the
    /// transform's case covers: a context with a coder of its own is not shared by two callers.)
    enum Step: String, CaseIterable, Sendable { case diskQuery, transfer, transform }

    @Test(.timeLimit(.minutes(1)), arguments: Step.allCases)
    func aCancelledRunnerLeavesAtOnceAndTheOthersGetTheImage(_ step: Step) async throws {
        let h = try await ManagerHarness()
        var context = ImageContext()
        var options: ImageOptions = .fromLoaderOnly
        switch step {
        case .diskQuery:
            // A cache whose queries take 400 ms: the runner is cancelled while the work asks the disk.
            context.cache = InstrumentedCache(base: h.cache, queryDelay: .milliseconds(400))
            options = []
            h.server.route("/a.png", .respond(body: ManagerHarness.png))
        case .transfer:
            h.server.route("/a.png", .drip(body: ManagerHarness.png, chunk: ManagerHarness.png.count / 8 + 1, interval: .milliseconds(60)))
        case .transform:
            context.transformer = SlowTransformer()
            h.server.route("/a.png", .respond(body: ManagerHarness.png))
        }
        let manager = h.manager, url = h.url("/a.png")
        let (runnerOptions, runnerContext) = (options, context)
        let runner = Task { try await manager.image(for: url, options: runnerOptions, context: runnerContext) }
        // The second caller joins once the runner's work is in flight.
        let deadline = ContinuousClock.now + .seconds(5)
        while await manager.inFlightCounts().loads == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        let other = Task { try await manager.image(for: url, options: runnerOptions, context: runnerContext) }
        try await Task.sleep(for: .milliseconds(100))
        let cancelled = ContinuousClock.now
        runner.cancel()
        let outcome = await runner.result
        let elapsed = ContinuousClock.now - cancelled
        #expect(throws: CancellationError.self, "\(step)") { try outcome.get() }
        #expect(elapsed < .milliseconds(150), "\(step): the runner took \(elapsed) to leave")
        let image = try await other.value
        #expect(image.width > 0)
        #expect(h.server.requestCount("/a.png") == 1, "\(step): \(h.server.requestCount("/a.png")) requests")
        await h.finish()
    }

    /// A runner alone when cancelled abandons the load: its transfer is stopped and nothing is
    /// stored.
    @Test(.timeLimit(.minutes(1))) func aCancelledRunnerAloneAbandonsTheLoad() async throws {
        let h = try await ManagerHarness()
        h.server.route("/stall.png", .stallAfter(bytes: 100, body: ManagerHarness.png))
        let manager = h.manager, url = h.url("/stall.png")
        let runner = Task { try await manager.image(for: url) }
        let deadline = ContinuousClock.now + .seconds(5)
        while h.loader.liveTransferCount == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        runner.cancel()
        await #expect(throws: CancellationError.self) { _ = try await runner.value }
        while h.loader.liveTransferCount > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        #expect(h.loader.liveTransferCount == 0, "the transfer was left running")
        #expect(await manager.inFlightCounts().loads == 0)
        await h.finish()
    }
}

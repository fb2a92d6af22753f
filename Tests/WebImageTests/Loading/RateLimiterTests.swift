import Foundation
import Synchronization
import Testing
@testable import WebImage

/// The token bucket in front of the loader (Nuke's `RateLimiter`), on an injected clock.
@Suite(.serialized) struct RateLimiterTests {
    @Test func aThousandRequestsAtOnceStartAsTheRateAllowsAndNeverAboveTheBurst() {
        let limiter = RateLimiter(rate: 100, burst: 25, clock: TestClock())
        let starts = (0..<1_000).map { _ in limiter.reserve() }
        #expect(starts.prefix(25).allSatisfy { $0 == .zero }, "the burst starts at once")
        #expect(starts[25] == .milliseconds(10) && starts[26] == .milliseconds(20))
        #expect(starts.last! == .milliseconds(9_750), "975 after the burst at 100 a second: 9.75 s of virtual time")
        // No window of one second holds more than the burst plus a second's rate.
        for (index, start) in starts.enumerated() {
            let window = starts[index...].prefix { $0 < start + .seconds(1) }.count
            #expect(window <= 25 + 100)
        }
    }

    @Test func anIdleBucketFillsAgainUpToTheBurst() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(rate: 10, burst: 5, clock: clock)
        for _ in 0..<5 { #expect(limiter.reserve() == .zero) }
        #expect(limiter.reserve() == .milliseconds(100))
        try await clock.sleep(for: .seconds(60))   // a minute idle
        let afterIdle = (0..<7).map { _ in limiter.reserve() }
        #expect(afterIdle == [.zero, .zero, .zero, .zero, .zero, .milliseconds(100), .milliseconds(200)],
                "a full bucket again, never more than the burst")
    }

    @Test func waitingSleepsOnTheClockAndACancelledWaiterStops() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(rate: 2, burst: 1, clock: clock)
        try await limiter.wait()
        try await limiter.wait()
        #expect(clock.sleeps == [.milliseconds(500)])
        let holding = TestClock(holds: true)
        let slow = RateLimiter(rate: 1, burst: 1, clock: holding)
        try await slow.wait()
        let waiter = Task { try await slow.wait() }
        for _ in 0..<200 where holding.sleeps.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }

    /// Through the manager: new transfers take tokens; memory hits and joining callers do not.
    @Test func onlyNewTransfersTakeTokens() async throws {
        let clock = TestClock()
        var configuration = ImageManager.Configuration()
        let limiter = RateLimiter(rate: 100, burst: 25, clock: clock)
        configuration.rateLimiter = limiter
        let h = try await ManagerHarness(configuration: configuration)
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let urls = (0..<60).map { h.url("/a.png?n=\($0)") }
        let manager = h.manager
        try await withThrowingTaskGroup(of: Void.self) { group in
            for url in urls + urls { group.addTask { _ = try await manager.image(for: url) } }   // two callers each
            try await group.waitForAll()
        }
        #expect(h.server.requestCount("/a.png") == 60)
        #expect(limiter.taken == 60, "a token per transfer, none for the second caller of each")
        // Past the burst they waited. (The test clock's time jumps to each sleeper's deadline,
        // so how many slept after the first jump depends on the order they ran.)
        #expect(!clock.sleeps.isEmpty && clock.now.offset >= .milliseconds(350))
        for url in urls { _ = try await manager.image(for: url) }   // memory hits
        #expect(limiter.taken == 60 && h.server.requestCount("/a.png") == 60)
        // A file URL is not limited.
        let file = h.directory.url.appendingPathComponent("local.png")
        try ManagerHarness.png.write(to: file)
        _ = try await manager.image(for: file)
        #expect(limiter.taken == 60)
        await h.finish()
    }
}

import Foundation
import Testing
@testable import WebImage

/// `RetryStrategy` (Kingfisher's `DelayRetryStrategy`): transient failures tried again with a
/// backoff or the server's `Retry-After`, on an injected clock; nothing else retried.
@Suite(.serialized) struct RetryStrategyTests {
    static let png = ManagerHarness.png

    func context(_ strategy: RetryStrategy) -> ImageContext {
        var context = ImageContext()
        context.retryStrategy = strategy
        return context
    }

    @Test func delaysFollowTheBackoffAndTheJitter() {
        let fixed = RetryStrategy(backoff: .fixed(.seconds(2)), jitter: 0)
        #expect(fixed.delay(beforeRetry: 1) == .seconds(2) && fixed.delay(beforeRetry: 5) == .seconds(2))
        let exponential = RetryStrategy(backoff: .exponential(initial: .seconds(1), multiplier: 3, maximum: .seconds(20)), jitter: 0)
        #expect((1...4).map { exponential.delay(beforeRetry: $0) } == [.seconds(1), .seconds(3), .seconds(9), .seconds(20)])
        let jittered = RetryStrategy(backoff: .fixed(.seconds(10)), jitter: 0.2)
        #expect(jittered.delay(beforeRetry: 1, random: 0) == .seconds(10))
        #expect(jittered.delay(beforeRetry: 1, random: 0.5) == .seconds(9))
        #expect(jittered.delay(beforeRetry: 1, random: 1) == .seconds(8))
        #expect(jittered.delay(beforeRetry: 1, retryAfter: .seconds(4), random: 0.5) == .seconds(4), "the server's wait as it is")
    }

    @Test func onlyTransientFailuresAreRetried() {
        let url = URL(string: "http://example.com/a.png")!
        for code in [408, 429, 500, 502, 503, 504] { #expect(RetryStrategy.isTransient(ImageError.badStatusCode(code, url: url)), "\(code)") }
        for code in [400, 401, 403, 404, 410] { #expect(!RetryStrategy.isTransient(ImageError.badStatusCode(code, url: url)), "\(code)") }
        #expect(RetryStrategy.isTransient(ImageError.timedOut(url: url)))
        #expect(RetryStrategy.isTransient(ImageError.network(url: url, reason: "reset")))
        #expect(!RetryStrategy.isTransient(ImageError.decodingFailed(.emptyData, source: "a", byteCount: 0)))
        #expect(!RetryStrategy.isTransient(ImageError.invalidContentType("text/html", url: url)))
        #expect(!RetryStrategy.isTransient(CancellationError()))
    }

    @Test func retryAfterIsSecondsOrAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_000_000_000)   // Sun, 09 Sep 2001 01:46:40 GMT
        #expect(RetryStrategy.retryAfter("120", now: now) == .seconds(120))
        #expect(RetryStrategy.retryAfter(" 0 ", now: now) == .zero)
        #expect(RetryStrategy.retryAfter("Sun, 09 Sep 2001 01:47:10 GMT", now: now) == .seconds(30))
        #expect(RetryStrategy.retryAfter("Sun, 09 Sep 2001 01:40:00 GMT", now: now) == .zero, "a date past is no wait")
        #expect(RetryStrategy.retryAfter("-5", now: now) == nil)
        #expect(RetryStrategy.retryAfter("soon", now: now) == nil)
        #expect(RetryStrategy.retryAfter(nil, now: now) == nil)
    }

    @Test func transientStatusesAndResetsAreRetriedAfterTheBackoff() async throws {
        let h = try await ManagerHarness()
        h.server.route("/flaky.png", .sequence([.respond(status: 503, contentType: "text/plain", body: Data("busy".utf8)),
                                                .resetAfter(bytes: 10, body: Self.png), .respond(body: Self.png)]))
        let clock = TestClock()
        let strategy = RetryStrategy(maxAttempts: 3, backoff: .fixed(.seconds(1)), jitter: 0, clock: clock)
        let image = try await h.manager.image(for: h.url("/flaky.png"), context: context(strategy))
        #expect(image.bitmap.width == 64)
        #expect(h.server.requestCount("/flaky.png") == 3)
        #expect(clock.sleeps == [.seconds(1), .seconds(1)])
        await h.finish()
    }

    @Test func withoutAStrategyOrForA404NothingIsRetried() async throws {
        let h = try await ManagerHarness()
        h.server.route("/busy.png", .sequence([.respond(status: 503, body: Data()), .respond(body: Self.png)]))
        h.server.route("/gone.png", .sequence([.respond(status: 404, body: Data()), .respond(body: Self.png)]))
        await #expect(throws: ImageError.badStatusCode(503, url: h.url("/busy.png"))) { try await h.manager.image(for: h.url("/busy.png")) }
        #expect(h.server.requestCount("/busy.png") == 1, "off by default")
        let clock = TestClock()
        let strategy = RetryStrategy(maxAttempts: 5, backoff: .fixed(.seconds(1)), clock: clock)
        await #expect(throws: ImageError.badStatusCode(404, url: h.url("/gone.png"))) {
            try await h.manager.image(for: h.url("/gone.png"), context: context(strategy))
        }
        #expect(h.server.requestCount("/gone.png") == 1 && clock.sleeps.isEmpty)
        await h.finish()
    }

    @Test func spentAttemptsGiveTheLastErrorAndOnlyItIsBlacklisted() async throws {
        let h = try await ManagerHarness()
        h.server.route("/down.png", .respond(status: 500, body: Data()))
        h.server.route("/moved.png", .sequence([.respond(status: 503, body: Data()), .respond(status: 404, body: Data())]))
        let clock = TestClock()
        let strategy = RetryStrategy(maxAttempts: 3, backoff: .exponential(initial: .seconds(1), multiplier: 2, maximum: .seconds(60)),
                                     jitter: 0, clock: clock)
        await #expect(throws: ImageError.badStatusCode(500, url: h.url("/down.png"))) {
            try await h.manager.image(for: h.url("/down.png"), context: context(strategy))
        }
        #expect(h.server.requestCount("/down.png") == 3 && clock.sleeps == [.seconds(1), .seconds(2)])
        #expect(await !h.manager.isFailedURL(h.url("/down.png")))
        await #expect(throws: ImageError.badStatusCode(404, url: h.url("/moved.png"))) {
            try await h.manager.image(for: h.url("/moved.png"), context: context(strategy))
        }
        #expect(h.server.requestCount("/moved.png") == 2)
        #expect(await h.manager.isFailedURL(h.url("/moved.png")), "the last attempt's 404 blacklists the URL")
        await h.finish()
    }

    @Test func retryAfterReplacesTheBackoffAndTooLongEndsTheRetries() async throws {
        let h = try await ManagerHarness()
        h.server.route("/limited.png", .sequence([.headers([("retry-after", "7")], then: .respond(status: 429, body: Data())),
                                                  .respond(body: Self.png)]))
        h.server.route("/later.png", .sequence([.headers([("retry-after", "3600")], then: .respond(status: 503, body: Data())),
                                                .respond(body: Self.png)]))
        let clock = TestClock()
        let strategy = RetryStrategy(maxAttempts: 3, backoff: .fixed(.seconds(1)), jitter: 0, clock: clock)
        _ = try await h.manager.image(for: h.url("/limited.png"), context: context(strategy))
        #expect(clock.sleeps == [.seconds(7)])
        await #expect(throws: ImageError.badStatusCode(503, url: h.url("/later.png"))) {
            try await h.manager.image(for: h.url("/later.png"), context: context(strategy))
        }
        #expect(h.server.requestCount("/later.png") == 1 && clock.sleeps == [.seconds(7)], "an hour is longer than the 60 s allowed")
        await h.finish()
    }

    @Test func cancellingTheCallerStopsTheLoopInItsDelay() async throws {
        let h = try await ManagerHarness()
        h.server.route("/flaky.png", .sequence([.respond(status: 503, body: Data()), .respond(body: Self.png)]))
        let clock = TestClock(holds: true)
        let strategy = RetryStrategy(maxAttempts: 3, backoff: .fixed(.seconds(1)), clock: clock)
        let manager = h.manager, url = h.url("/flaky.png"), context = context(strategy)
        let task = Task { try await manager.data(for: url, context: context) }
        for _ in 0..<400 where clock.sleeps.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        #expect(clock.sleeps.count == 1)
        let start = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ContinuousClock.now - start < .seconds(1))
        for _ in 0..<200 where await manager.inFlightCounts() != (0, 0) { try await Task.sleep(for: .milliseconds(5)) }
        #expect(await manager.inFlightCounts() == (0, 0), "the shared transfer ended too")
        #expect(h.server.requestCount("/flaky.png") == 1)
        await h.finish()
    }
}

import Synchronization

/// A token bucket in front of the loader (Nuke's `RateLimiter`): at most `burst` requests start
/// at once, then `rate` a second. It smooths bursts of *new* requests (a prefetch of thousands,
/// a fast scroll) without delaying anything else: memory and disk hits, and callers that join
/// work in flight, never take a token. On by default in every manager with Nuke's figures
/// (80 a second, bursts of 25); `ImageManager.Configuration.rateLimiter = nil` turns it off.
///
/// Each request is given its start time when it asks (the generic cell rate algorithm), so
/// waiting costs no queue: a request that is cancelled while it waits does not give its
/// place back.
public final class RateLimiter: Sendable {
    /// Requests a second, after the burst.
    public let rate: Double
    /// Requests that may start at once when the bucket is full.
    public let burst: Int
    /// The time since the limiter was made, on its clock.
    private let elapsed: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    /// The theoretical arrival time of the next request (since the limiter was made).
    private let next = Mutex<Duration>(.zero)
    private let reservations = Atomic<Int>(0)

    /// Requests that have taken a token so far.
    var taken: Int { reservations.load(ordering: .relaxed) }

    /// A limiter of `rate` requests a second with bursts of `burst`, timed on `clock` (a test
    /// injects its own).
    public init(rate: Double = 80, burst: Int = 25, clock: any Clock<Duration> = ContinuousClock()) {
        self.rate = max(rate, 0.001)
        self.burst = max(burst, 1)
        (elapsed, sleep) = RateLimiter.timing(clock)
    }

    private static func timing<C: Clock<Duration>>(_ clock: C)
        -> (@Sendable () -> Duration, @Sendable (Duration) async throws -> Void) {
        let origin = clock.now
        return ({ origin.duration(to: clock.now) }, { try await clock.sleep(for: $0) })
    }

    /// Waits until this request may start.
    /// - Throws: `CancellationError` when the task is cancelled while it waits.
    public func wait() async throws {
        let delay = reserve()
        if delay > .zero { try await sleep(delay) }
        try Task.checkCancellation()
    }

    /// Takes the next start time and returns how long from now it is.
    func reserve() -> Duration {
        reservations.add(1, ordering: .relaxed)
        let now = elapsed()
        let interval = Duration.seconds(1 / rate)
        let tolerance = interval * (burst - 1)
        return next.withLock { next in
            let arrival = max(next, now)
            next = arrival + interval
            return max(.zero, arrival - tolerance - now)
        }
    }
}

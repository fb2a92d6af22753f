import Foundation
import Synchronization

/// How a failed download is tried again (Kingfisher's `RetryStrategy` and
/// `DelayRetryStrategy`). Off unless a context sets one (`ImageContext.retryStrategy`, or the
/// manager's default context).
///
/// Only transient failures are retried: timeouts, network errors (a reset, a refused
/// connection) and the statuses 408, 429 and 5xx; never another 4xx, an undecodable body or a
/// cancellation. A `Retry-After` header (seconds or an HTTP date) on a 429 or 503 replaces the
/// backoff's delay when it is no longer than `maximumRetryAfter`; a longer one ends the retries.
/// The retries belong to the transfer that its callers share (the first caller's strategy
/// applies); cancelling every caller stops the loop at once, even in the middle of a delay.
/// The failed-URL list sees only the last attempt's error.
public struct RetryStrategy: Sendable {
    /// The wait before each retry.
    public enum Backoff: Sendable, Equatable {
        /// The same delay before every retry.
        case fixed(Duration)
        /// `initial` before the first retry, multiplied by `multiplier` for each next one, never
        /// more than `maximum`.
        case exponential(initial: Duration, multiplier: Double, maximum: Duration)
    }

    /// Attempts in all, the first one included (1: no retry).
    public var maxAttempts: Int
    /// The wait before each retry.
    public var backoff: Backoff
    /// The share of each delay drawn at random (0.2: the delay is 80 to 100 % of the backoff's),
    /// so that clients that failed together do not come back together.
    public var jitter: Double
    /// The longest `Retry-After` waited for.
    public var maximumRetryAfter: Duration
    /// The clock the delays are slept on (a test injects its own).
    public var clock: any Clock<Duration>

    /// A strategy of `maxAttempts` attempts in all with `backoff` between them.
    public init(maxAttempts: Int = 3,
                backoff: Backoff = .exponential(initial: .milliseconds(500), multiplier: 2, maximum: .seconds(30)),
                jitter: Double = 0.2, maximumRetryAfter: Duration = .seconds(60), clock: any Clock<Duration> = ContinuousClock()) {
        self.maxAttempts = max(1, maxAttempts)
        self.backoff = backoff
        self.jitter = min(max(jitter, 0), 1)
        self.maximumRetryAfter = maximumRetryAfter
        self.clock = clock
    }

    /// Whether `error` may go away on its own: a timeout, a network error, or status 408, 429 or 5xx.
    public static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? ImageError else { return false }
        switch error {
        case .timedOut, .network: return true
        case .badStatusCode(let code, _): return code == 408 || code == 429 || (500..<600).contains(code)
        default: return false
        }
    }

    /// The wait before retry number `retry` (1 for the first), with `random` in 0..<1 choosing
    /// within the jitter; `retryAfter` (the server's) beats the backoff.
    public func delay(beforeRetry retry: Int, retryAfter: Duration? = nil, random: Double = 0) -> Duration {
        if let retryAfter { return retryAfter }
        let base: Duration
        switch backoff {
        case .fixed(let delay):
            base = delay
        case .exponential(let initial, let multiplier, let maximum):
            let factor = pow(max(multiplier, 1), Double(max(retry, 1) - 1))
            base = min(initial * factor, maximum)
        }
        return base * (1 - jitter * min(max(random, 0), 1))
    }

    /// Runs `attempt` until it succeeds, fails for good, or the attempts are spent; each attempt
    /// gets a fresh `ResponseRecorder` for the response a rejected status came with.
    func run<Output>(_ attempt: (ResponseRecorder) async throws -> Output) async throws -> Output {
        var retry = 0
        while true {
            let recorder = ResponseRecorder()
            do {
                return try await attempt(recorder)
            } catch {
                retry += 1
                guard retry < maxAttempts, RetryStrategy.isTransient(error), !Task.isCancelled else { throw error }
                let retryAfter = recorder.response.flatMap { RetryStrategy.retryAfter($0.headers["retry-after"]) }
                if let retryAfter, retryAfter > maximumRetryAfter { throw error }
                try await clock.sleep(for: delay(beforeRetry: retry, retryAfter: retryAfter, random: Double.random(in: 0..<1)))
            }
        }
    }

    /// A `Retry-After` value as a wait from now: seconds, or an HTTP date (RFC 9110).
    static func retryAfter(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return seconds >= 0 ? .seconds(seconds) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSince(now) * 1000)))
    }
}

/// The response a loader rejected for its status, kept for the retry loop (its `Retry-After`).
final class ResponseRecorder: Sendable {
    private let value = Mutex<ImageLoaderResponse?>(nil)

    /// The rejected response, if any.
    var response: ImageLoaderResponse? { value.withLock { $0 } }

    func record(_ response: ImageLoaderResponse) { value.withLock { $0 = response } }
}

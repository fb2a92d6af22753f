import Synchronization

/// A clock whose sleeps take no wall time: each one moves `now` to its deadline and is recorded.
/// With `holds`, a sleep waits (for real, cancellably) until its task is cancelled.
final class TestClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private let state = Mutex<(now: Duration, sleeps: [Duration])>((.zero, []))
    let holds: Bool

    init(holds: Bool = false) { self.holds = holds }

    var now: Instant { Instant(offset: state.withLock { $0.now }) }
    var minimumResolution: Duration { .zero }
    /// Every sleep asked for, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        state.withLock { state in
            state.sleeps.append(deadline.offset - state.now)
            state.now = max(state.now, deadline.offset)
        }
        if holds { try await Task.sleep(for: .seconds(3600)) }
        try Task.checkCancellation()
    }
}

import ServiceLifecycle
import Synchronization

/// The bound on a graceful stop: when the stop begins (SIGTERM or SIGINT), the requests in flight
/// have `grace` to finish; then their works are cancelled and answered 503, so that the server
/// stops within its documented time instead of waiting for each request's own timeout.
final class StopDeadline: Service, Sendable {
    private let grace: Duration
    private let work: ResponseWork
    private let timer = Mutex<Task<Void, Never>?>(nil)

    init(grace: Duration, work: ResponseWork) {
        self.grace = grace
        self.work = work
    }

    /// Waits for the stop to begin, then arms the deadline and returns (the server's own stop
    /// goes on meanwhile).
    func run() async throws {
        do { try await gracefulShutdown() } catch { return }   // cancelled: no graceful stop
        let grace = self.grace, work = self.work
        timer.withLock { $0 = Task { if (try? await Task.sleep(for: grace)) != nil { work.cancelAll() } } }
    }

    /// The stop ended: the deadline has nothing left to cut.
    func disarm() { timer.withLock { $0?.cancel() } }
}

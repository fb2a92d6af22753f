import Synchronization

/// A gate tasks pass while it is open and wait at while it is closed (a paused prefetcher):
/// opened, it lets its waiters through in the order they came. A waiting task that is cancelled
/// leaves at once.
final class PauseGate: Sendable {
    private struct State {
        var closed = false
        var waiters = WaiterQueue()
    }
    private let state = Mutex(State())

    /// Whether the gate is closed. Opening it resumes every waiter, oldest first.
    var isClosed: Bool {
        get { state.withLock { $0.closed } }
        set {
            let waiters = state.withLock { state -> [WaiterQueue.Waiter] in
                state.closed = newValue
                return newValue ? [] : state.waiters.takeAll()
            }
            for waiter in waiters { waiter.resume(returning: true) }
        }
    }

    /// Returns at once while the gate is open; otherwise waits until it opens (true) or the
    /// calling task is cancelled (false).
    func pass() async -> Bool {
        let id = state.withLock { state -> Int? in state.closed ? state.waiters.makeID() : nil }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: WaiterQueue.Waiter) in
                let now = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    guard state.closed else { return true }
                    state.waiters.append(id, continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.waiters.remove(id) }?.resume(returning: false)
        }
    }
}

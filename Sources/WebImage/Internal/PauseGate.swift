import Synchronization

/// A gate tasks pass while it is open and wait at while it is closed (a paused prefetcher):
/// opened, it lets its waiters through in the order they came. A waiting task that is cancelled
/// leaves at once.
final class PauseGate: Sendable {
    private struct State {
        var closed = false
        var waiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID = 0
    }
    private let state = Mutex(State())

    /// Whether the gate is closed. Opening it resumes every waiter, oldest first.
    var isClosed: Bool {
        get { state.withLock { $0.closed } }
        set {
            let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                state.closed = newValue
                guard !newValue else { return [] }
                defer { state.waiters = [] }
                return state.waiters.map(\.continuation)
            }
            for waiter in waiters { waiter.resume(returning: true) }
        }
    }

    /// Returns at once while the gate is open; otherwise waits until it opens (true) or the
    /// calling task is cancelled (false).
    func pass() async -> Bool {
        let id = state.withLock { state -> Int? in
            guard state.closed else { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    guard state.closed else { return true }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: false)
        }
    }
}

import Synchronization

/// The bytes of pixels that all requests may hold at once while their results are transformed
/// and encoded. A request reserves what its result needs (computed from its size before any
/// buffer exists) and waits while others hold the budget; reservations are granted in order. A
/// request larger than the whole budget reserves all of it: it runs alone.
final class ProcessingBudget: Sendable {
    private struct Waiter {
        let id: Int
        let bytes: Int
        let continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        var nextID = 0

        /// Takes `bytes` when nobody waits before and they are free.
        mutating func grant(_ bytes: Int) -> Bool {
            guard waiters.isEmpty, available >= bytes else { return false }
            available -= bytes
            return true
        }
    }
    /// The whole budget, in bytes.
    let capacity: Int
    private let state: Mutex<State>

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        state = Mutex(State(available: max(1, capacity)))
    }

    /// Bytes not reserved now.
    var available: Int { state.withLock { $0.available } }

    /// Waits until `bytes` (at most `capacity`) are free and reserves them.
    /// - Throws: `CancellationError` when the task is cancelled while it waits (nothing is kept).
    func reserve(_ bytes: Int) async throws {
        let bytes = min(bytes, capacity)
        if state.withLock({ $0.grant(bytes) }) { return }
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Granted, cancelled or waiting, decided under the lock (a release or a
                // cancellation between the first look and here is seen).
                let granted = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if state.grant(bytes) { return true }
                    state.waiters.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    return nil
                }
                switch granted {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
            if waiter != nil { wakeWaiters() }
        }
    }

    /// Gives back `bytes` reserved before, and lets waiting requests in, in order.
    func release(_ bytes: Int) {
        state.withLock { $0.available += min(bytes, capacity) }
        wakeWaiters()
    }

    /// Grants the waiters at the head of the line whose reservations fit now.
    private func wakeWaiters() {
        let granted = state.withLock { state -> [Waiter] in
            var granted: [Waiter] = []
            while let first = state.waiters.first, first.bytes <= state.available {
                state.available -= first.bytes
                granted.append(state.waiters.removeFirst())
            }
            return granted
        }
        for waiter in granted { waiter.continuation.resume() }
    }
}

import Synchronization

/// A counting semaphore for tasks: `acquire` waits for a free slot (false when the task is
/// cancelled while waiting), `release` hands the slot to the longest waiter.
final class TaskSlots: Sendable {
    private struct State {
        var free: Int
        var waiters = WaiterQueue()
    }
    private let state: Mutex<State>

    init(_ count: Int) { state = Mutex(State(free: count)) }

    /// Tasks waiting for a slot (for tests).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Takes a slot; false (and no slot) when the calling task is cancelled first. A free slot
    /// with nobody waiting is taken without suspending.
    func acquire() async -> Bool {
        let id = state.withLock { state -> Int? in
            guard state.free > 0, state.waiters.isEmpty else { return state.waiters.makeID() }
            state.free -= 1
            return nil
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: WaiterQueue.Waiter) in
                let granted = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if state.free > 0 {
                        state.free -= 1
                        return true
                    }
                    state.waiters.append(id, continuation)
                    return nil
                }
                if let granted { continuation.resume(returning: granted) }
            }
        } onCancel: {
            state.withLock { $0.waiters.remove(id) }?.resume(returning: false)
        }
    }

    /// Gives a slot back (to the longest waiter, if any).
    func release() {
        let waiter = state.withLock { state -> WaiterQueue.Waiter? in
            if let waiter = state.waiters.takeFirst() { return waiter }
            state.free += 1
            return nil
        }
        waiter?.resume(returning: true)
    }
}

import Synchronization

/// A counting semaphore for tasks: `acquire` waits for a free slot (false when the task is
/// cancelled while waiting), `release` hands the slot to the longest waiter.
final class TaskSlots: Sendable {
    private struct State {
        var free: Int
        var waiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID = 0
    }
    private let state: Mutex<State>

    init(_ count: Int) { state = Mutex(State(free: count)) }

    /// Takes a slot; false (and no slot) when the calling task is cancelled first. A free slot
    /// with nobody waiting is taken without suspending.
    func acquire() async -> Bool {
        let taken = state.withLock { state -> Bool in
            guard state.free > 0, state.waiters.isEmpty else { return false }
            state.free -= 1
            return true
        }
        if taken { return true }
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let granted = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if state.free > 0 {
                        state.free -= 1
                        return true
                    }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let granted { continuation.resume(returning: granted) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: false)
        }
    }

    /// Gives a slot back (to the longest waiter, if any).
    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if state.waiters.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        waiter?.resume(returning: true)
    }
}

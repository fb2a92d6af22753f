import Synchronization

/// A counting semaphore for tasks: `acquire` waits for a free slot (false when the task is
/// cancelled while waiting), `release` hands the slot to the longest waiter.
final class TaskSlots: Sendable {
    private struct State {
        var free: Int
        /// The waiters in the order they came, from `head` on (nil: one that was cancelled). Taken
        /// from the front by moving `head`: removing the first element of an array moves every
        /// other one (with a thousand loads waiting to decode, most of a release's time).
        var waiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>)?] = []
        var head = 0
        /// Waiters not cancelled.
        var live = 0
        var nextID = 0

        var hasWaiters: Bool { live > 0 }

        mutating func append(_ id: Int, _ continuation: CheckedContinuation<Bool, Never>) {
            waiters.append((id, continuation))
            live += 1
        }

        /// The waiter `id`, taken out (nil when a release took it first).
        mutating func remove(_ id: Int) -> CheckedContinuation<Bool, Never>? {
            guard let index = waiters[head...].firstIndex(where: { $0?.id == id }), let waiter = waiters[index] else { return nil }
            waiters[index] = nil
            live -= 1
            return waiter.continuation
        }

        /// The longest waiter, taken out (the cancelled ones before it dropped).
        mutating func takeFirst() -> CheckedContinuation<Bool, Never>? {
            while head < waiters.count {
                let waiter = waiters[head]
                waiters[head] = nil
                head += 1
                if let waiter {
                    live -= 1
                    compact()
                    return waiter.continuation
                }
            }
            compact()
            return nil
        }

        /// Drops the taken slots at the front once they are most of the array.
        mutating func compact() {
            if head == waiters.count {
                waiters.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= waiters.count {
                waiters.removeFirst(head)
                head = 0
            }
        }
    }
    private let state: Mutex<State>

    init(_ count: Int) { state = Mutex(State(free: count)) }

    /// Tasks waiting for a slot (for tests).
    var waiterCount: Int { state.withLock { $0.live } }

    /// Takes a slot; false (and no slot) when the calling task is cancelled first. A free slot
    /// with nobody waiting is taken without suspending.
    func acquire() async -> Bool {
        let taken = state.withLock { state -> Bool in
            guard state.free > 0, !state.hasWaiters else { return false }
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
                    state.append(id, continuation)
                    return nil
                }
                if let granted { continuation.resume(returning: granted) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.remove(id) }
            waiter?.resume(returning: false)
        }
    }

    /// Gives a slot back (to the longest waiter, if any).
    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if let waiter = state.takeFirst() { return waiter }
            state.free += 1
            return nil
        }
        waiter?.resume(returning: true)
    }
}

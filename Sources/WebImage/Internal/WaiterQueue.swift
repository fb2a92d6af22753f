/// Tasks waiting in the order they came, each with the continuation that resumes it (true: go
/// on; false: cancelled), for the gates that hold tasks back (`TaskSlots`, `PauseGate`). Kept
/// under its owner's lock. A waiter is named by an id taken before it suspends, so that its
/// cancellation handler can take it out.
///
/// Taken from the front by moving `head`: removing the first element of an array moves every
/// other one (with a thousand loads waiting to decode, that was most of a release's time).
struct WaiterQueue {
    typealias Waiter = CheckedContinuation<Bool, Never>

    /// From `head` on; nil: one that was taken out by its cancellation.
    private var waiters: [(id: Int, continuation: Waiter)?] = []
    private var head = 0
    private var lastID = 0
    /// Waiters still waiting.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The id of a waiter about to wait.
    mutating func makeID() -> Int {
        lastID += 1
        return lastID
    }

    mutating func append(_ id: Int, _ continuation: Waiter) {
        waiters.append((id, continuation))
        count += 1
    }

    /// The waiter `id`, taken out (nil when it was taken first).
    mutating func remove(_ id: Int) -> Waiter? {
        guard let index = waiters[head...].firstIndex(where: { $0?.id == id }), let waiter = waiters[index] else { return nil }
        waiters[index] = nil
        count -= 1
        return waiter.continuation
    }

    /// The longest waiter, taken out.
    mutating func takeFirst() -> Waiter? {
        while head < waiters.count {
            let waiter = waiters[head]
            waiters[head] = nil
            head += 1
            if let waiter {
                count -= 1
                compact()
                return waiter.continuation
            }
        }
        compact()
        return nil
    }

    /// Every waiter, oldest first, taken out.
    mutating func takeAll() -> [Waiter] {
        let all = waiters[head...].compactMap { $0?.continuation }
        waiters.removeAll(keepingCapacity: true)
        head = 0
        count = 0
        return all
    }

    /// Drops the taken places at the front once they are most of the array.
    private mutating func compact() {
        if head == waiters.count {
            waiters.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= waiters.count {
            waiters.removeFirst(head)
            head = 0
        }
    }
}

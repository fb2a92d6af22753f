import Synchronization

/// The deadlines of a manager's waiting calls, kept in one heap and fired from one sleeping task
/// (AsyncHTTPClient's one scheduled task per request, made one per manager): a call with a time
/// limit schedules its time-out when it subscribes to its shared work, and cancels it when its
/// wait ends. A time-out that fires takes that one subscriber out of the work
/// (`SharedWork.expire`); the work goes on for the others.
///
/// A cancelled deadline leaves its heap entry behind until it comes up or the heap is
/// compacted; its action is dropped at once, so that nothing it captured is kept.
final class Deadlines: Sendable {
    private struct Entry {
        let due: ContinuousClock.Instant
        let token: Int
    }

    private struct State {
        /// A binary min-heap by `due`.
        var heap: [Entry] = []
        /// The actions of the deadlines not yet fired or cancelled, by token.
        var actions: [Int: @Sendable () -> Void] = [:]
        var nextToken = 0
        /// The sleeping task, what it sleeps until, and its generation (a replaced one stops).
        var sleeper: Task<Void, Never>?
        var sleepsUntil: ContinuousClock.Instant?
        var generation = 0

        mutating func push(_ entry: Entry) {
            heap.append(entry)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child].due < heap[parent].due else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        mutating func popFirst() -> Entry? {
            guard let first = heap.first else { return nil }
            let last = heap.removeLast()
            if !heap.isEmpty {
                heap[0] = last
                var parent = 0
                while true {
                    let left = 2 * parent + 1, right = left + 1
                    var smallest = parent
                    if left < heap.count, heap[left].due < heap[smallest].due { smallest = left }
                    if right < heap.count, heap[right].due < heap[smallest].due { smallest = right }
                    if smallest == parent { break }
                    heap.swapAt(parent, smallest)
                    parent = smallest
                }
            }
            return first
        }

        /// The earliest deadline still scheduled (cancelled entries on top are dropped).
        mutating func earliest() -> ContinuousClock.Instant? {
            while let first = heap.first, actions[first.token] == nil { _ = popFirst() }
            return heap.first?.due
        }

        /// Drops the entries of cancelled deadlines once they are most of the heap.
        mutating func compactIfSparse() {
            guard heap.count > 64, heap.count > 2 * actions.count else { return }
            let live = heap.filter { actions[$0.token] != nil }
            heap = []
            for entry in live { push(entry) }
        }
    }

    private let state = Mutex(State())

    /// A heap with no deadline and no task.
    init() {}

    /// Calls `expire` at `due` (from the timer's task) unless `cancel(_:)` comes first; returns
    /// the deadline's token.
    func schedule(at due: ContinuousClock.Instant, _ expire: @escaping @Sendable () -> Void) -> Int {
        let (token, replaced) = state.withLock { state -> (Int, Task<Void, Never>?) in
            state.nextToken += 1
            let token = state.nextToken
            state.actions[token] = expire
            state.push(Entry(due: due, token: token))
            if let current = state.sleepsUntil, current <= due, state.sleeper != nil { return (token, nil) }
            // The new deadline comes first: a new sleeper for it, the old one told to stop.
            let old = state.sleeper
            state.generation += 1
            state.sleepsUntil = due
            state.sleeper = makeSleeper(generation: state.generation)
            return (token, old)
        }
        replaced?.cancel()
        return token
    }

    /// Cancels deadline `token`: true when it had not fired (it never will), false when it had.
    @discardableResult
    func cancel(_ token: Int) -> Bool {
        state.withLock { state in
            guard state.actions.removeValue(forKey: token) != nil else { return false }
            state.compactIfSparse()
            return true
        }
    }

    /// The number of deadlines scheduled and not yet fired or cancelled (for tests).
    var count: Int { state.withLock { $0.actions.count } }

    private func makeSleeper(generation: Int) -> Task<Void, Never> {
        Task.detached(priority: .high) { [self] in
            while let due = next(generation: generation) {
                try? await Task.sleep(until: due, clock: .continuous)
                if Task.isCancelled { return }
                for expire in fire(generation: generation) { expire() }
            }
        }
    }

    /// What the sleeper of `generation` sleeps until next; nil: it stops (replaced, or nothing left).
    private func next(generation: Int) -> ContinuousClock.Instant? {
        state.withLock { state in
            guard state.generation == generation else { return nil }
            guard let due = state.earliest() else {
                (state.sleeper, state.sleepsUntil) = (nil, nil)
                return nil
            }
            state.sleepsUntil = due
            return due
        }
    }

    /// Takes out the actions of every deadline that has come.
    private func fire(generation: Int) -> [@Sendable () -> Void] {
        state.withLock { state in
            guard state.generation == generation else { return [] }
            let now = ContinuousClock.now
            var due: [@Sendable () -> Void] = []
            while let first = state.heap.first, first.due <= now {
                _ = state.popFirst()
                if let action = state.actions.removeValue(forKey: first.token) { due.append(action) }
            }
            return due
        }
    }
}

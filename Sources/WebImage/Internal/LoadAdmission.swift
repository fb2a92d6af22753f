import Synchronization

/// How many shared works of a manager run at once (`ImageManager.Configuration.maximumConcurrentLoads`);
/// the others wait here as an entry that starts their task, by priority, oldest or newest first
/// within a level (the order of the loader's own queue).
///
/// A work that waits here has no task yet: its callers wait in it as usual (and callers of the
/// same key join it), but nothing of the disk query, the transfer or the decode exists. A work
/// waiting in the loader's queue holds two suspended tasks (its own and its transfer's) and
/// their frames: with every work started at once, a burst of distinct calls went past its memory
/// budget (SoakBenchmarks; the figures are in Benchmarks/README.md, "Memory soak").
///
/// A slot passes from a work that ends straight to the next entry; an entry whose work was
/// abandoned before it started is withdrawn; an entry follows its work's priority (the highest
/// of its callers) while it waits.
final class LoadAdmission: Sendable {
    /// A work waiting for a slot.
    struct Entry: QueuedByID, Sendable {
        let id: Int
        let start: @Sendable () -> Void
    }
    private struct State {
        var running = 0
        var queue = PriorityQueues<Entry>()
        var lifo = false
    }
    private let state = Mutex(State())
    private let ids = Atomic<Int>(0)
    /// The most works running at once.
    let limit: Int

    init(limit: Int) { self.limit = max(1, limit) }

    /// A new entry id.
    func makeID() -> Int { ids.add(1, ordering: .relaxed).newValue }

    /// Calls `start` now when fewer than `limit` works run and none waits, else when a slot
    /// passes to it. The started work calls `finished()` once when it ends. `level` is read
    /// under the lock (a priority change racing the call is then seen by `move`).
    func enqueue(_ id: Int, level: () -> Int, lifo: Bool, start: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            state.lifo = lifo
            if state.running < limit && state.queue.isEmpty {
                state.running += 1
                return true
            }
            state.queue.append(Entry(id: id, start: start), level: level())
            return false
        }
        if now { start() }
    }

    /// A started work ended: its slot goes to the next entry, if any.
    func finished() {
        let next = state.withLock { state -> Entry? in
            if let next = state.queue.next(lifo: state.lifo) { return next }
            state.running -= 1
            return nil
        }
        next?.start()
    }

    /// Takes a waiting entry out (its work was abandoned before it started).
    func withdraw(_ id: Int) { _ = state.withLock { $0.queue.remove(id: id) } }

    /// Moves a waiting entry to the level `level` reads under the lock.
    func move(_ id: Int, toLevel level: () -> Int) { state.withLock { $0.queue.move(id: id, toLevel: level()) } }

    /// Works running and entries waiting (for tests and statistics).
    var counts: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.queue.count) } }
}

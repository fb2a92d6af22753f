import Synchronization

/// Bytes of downloaded bodies waiting for a decode, and the gate it makes for new transfers:
/// `HTTPImageLoader` starts no transfer whose request carries a gate without room (more than
/// `limit` bytes wait), and is woken when there is room again. Downloads end faster than
/// decodes; without it, 10,000 loads at once held gigabytes of bodies queued for two decoders
/// (SoakBenchmarks). The loader's queue keeps its order: held transfers start, by priority, as
/// soon as there is room.
///
/// A body is counted from the moment its transfer ends, on the loader's own thread (a
/// `BacklogClaim` handed over with the response), not when its work first runs: with both
/// cores decoding, finished transfers waited in the cooperative pool's queue unseen while the
/// loader kept starting new ones (SoakBenchmarks; Benchmarks/README.md, "Memory soak").
final class BacklogGate: Sendable {
    private struct State {
        var bytes = 0
        var wakers: [ObjectIdentifier: @Sendable () -> Void] = [:]
    }
    private let state = Mutex(State())
    /// The most bytes that may wait while new transfers still start.
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Bytes waiting now.
    var bytes: Int { state.withLock { $0.bytes } }

    /// Whether a new transfer may start.
    var hasRoom: Bool { state.withLock { $0.bytes <= limit } }

    /// Calls `wake` each time the backlog falls back to the limit (one waker per `owner`).
    func onRoom(_ owner: ObjectIdentifier, _ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wakers[owner] = wake }
    }

    /// A body of `count` bytes now waits for a decode, until the claim is released (or dropped).
    func claim(_ count: Int) -> BacklogClaim {
        add(count)
        return BacklogClaim(gate: self, bytes: count)
    }

    /// A body of `count` bytes now waits for a decode.
    func add(_ count: Int) { state.withLock { $0.bytes += count } }

    /// A body of `count` bytes no longer waits; held transfers are woken when there is room again.
    func remove(_ count: Int) {
        let wakers = state.withLock { state -> [@Sendable () -> Void] in
            let wasOver = state.bytes > limit
            state.bytes -= count
            return wasOver && state.bytes <= limit ? Array(state.wakers.values) : []
        }
        for wake in wakers { wake() }
    }
}

/// One body counted in a `BacklogGate`: released once, by the first work that starts decoding
/// it or fails, or when the last holder drops it (a cancelled caller, a shared download).
final class BacklogClaim: Sendable {
    private let gate: BacklogGate
    private let bytes: Int
    private let released = Atomic<Bool>(false)

    init(gate: BacklogGate, bytes: Int) {
        self.gate = gate
        self.bytes = bytes
        // Published by a releasing store, read back by `release()`'s acquiring exchange: made on
        // the loader's thread, the claim is released on another, and this is the ordering that
        // does not depend on how it travelled (ThreadSanitizer saw none on one path).
        released.store(false, ordering: .releasing)
    }

    /// The body no longer waits; later calls do nothing.
    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        gate.remove(bytes)
    }

    deinit { release() }
}

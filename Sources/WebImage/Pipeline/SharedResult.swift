import Foundation
import Synchronization

/// The result of a shared work, shared by reference among its callers: resuming a thousand
/// callers then costs one reference each, not one per field of the result (the callers run on
/// both cores at once, and every reference count they touch is contended).
///
/// A work that delivered its result early (before its stores) can wait until every caller it
/// resumed has taken the result (`waitForPickups(_:)`), so that it does not start the next
/// decode while decoded images wait in callers' tasks not yet run (in a burst, a resumed caller
/// queues behind thousands of jobs, each holding its bitmap; see MemorySoakTests).
@usableFromInline
final class SharedResult: Sendable {
    @usableFromInline let result: ImageResult
    /// Pickups expected less pickups made: callers may take the result before the work says
    /// how many it resumed, so it goes below zero, and reaches zero once, at the last pickup.
    private let outstanding = Atomic<Int>(0)
    /// The work waiting for the last pickup, or whether it came first.
    private let pickupWaiter = Mutex<(waiter: CheckedContinuation<Void, Never>?, done: Bool)>((nil, false))

    /// Whether pickups are counted (only for a result a work will wait on: the others cost
    /// their callers no shared write).
    let countsPickups: Bool

    init(_ result: ImageResult, countsPickups: Bool = false) {
        self.result = result
        self.countsPickups = countsPickups
    }

    /// A caller has taken the result (each resumed caller calls this once).
    func pickedUp() {
        guard countsPickups, outstanding.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        let waiter = pickupWaiter.withLock { state -> CheckedContinuation<Void, Never>? in
            state.done = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns once `count` callers resumed with this result have taken it (at once when the
    /// result does not count pickups).
    func waitForPickups(_ count: Int) async {
        guard countsPickups, count > 0, outstanding.add(count, ordering: .acquiringAndReleasing).newValue != 0 else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = pickupWaiter.withLock { state -> Bool in
                if !state.done { state.waiter = continuation }
                return state.done
            }
            if done { continuation.resume() }
        }
    }
}

/// What a shared load gives each of its callers, as the bookkeeping and the tracing read it: an
/// image load's `SharedResult`, or a data load's `LoadedData` (`ImageManager.data(for:)`).
protocol LoadOutput: Sendable {
    /// Where it came from (`.none`: the loader).
    var source: ImageCacheType { get }
    /// The bytes it was loaded from, when known.
    var byteCount: Int? { get }
    /// A caller took it (counted only for a result its work waits on, see `SharedResult`).
    func pickedUp()
}

extension SharedResult: LoadOutput {
    var source: ImageCacheType { result.cacheType }
    var byteCount: Int? { result.data?.count }
}

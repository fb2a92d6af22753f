import CoreMetrics
import Synchronization

/// What the shared tier saw since it was made.
public struct SharedCacheStatistics: Sendable, Equatable {
    /// Lookups answered by the tier with an entry that decoded.
    public var hits = 0
    /// Lookups the tier could not answer (absent, unreachable, corrupt).
    public var misses = 0
    /// Operations that failed on a node (down, slow, refused).
    public var errors = 0
    /// Entries not stored because they were over the size limit.
    public var skippedLarge = 0
    /// Misses that waited for another machine's lease.
    public var leaseWaits = 0
    /// Stored values that were not entries (or did not decode), deleted.
    public var corrupt = 0
}

/// The tier's counters, kept here and sent to swift-metrics as
/// `webimage_shared_cache_total{result=hit|miss|error|skipped_large|lease_wait|corrupt}`.
final class SharedCacheCounters: Sendable {
    enum Event: String, CaseIterable, Sendable {
        case hit, miss, error, skippedLarge = "skipped_large", leaseWait = "lease_wait", corrupt
    }

    private let values = Mutex(SharedCacheStatistics())
    private let counters: [Event: Counter] = Dictionary(uniqueKeysWithValues: Event.allCases.map {
        ($0, Counter(label: "webimage_shared_cache_total", dimensions: [("result", $0.rawValue)]))
    })

    func count(_ event: Event) {
        values.withLock { values in
            switch event {
            case .hit: values.hits += 1
            case .miss: values.misses += 1
            case .error: values.errors += 1
            case .skippedLarge: values.skippedLarge += 1
            case .leaseWait: values.leaseWaits += 1
            case .corrupt: values.corrupt += 1
            }
        }
        counters[event]?.increment()
    }

    var snapshot: SharedCacheStatistics { values.withLock { $0 } }
}

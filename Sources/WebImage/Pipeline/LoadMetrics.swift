import CoreMetrics
import Foundation

/// A manager's metrics, through swift-metrics (the ecosystem's API; the program chooses the
/// backend, swift-prometheus for one, with `MetricsSystem.bootstrap`). Made once per manager:
/// until a backend is bootstrapped each update is one call into swift-metrics' no-op handler.
/// A manager made before the bootstrap keeps the no-op handlers (swift-metrics binds a metric
/// to the backend when it is made).
///
/// | metric | type | dimensions |
/// | --- | --- | --- |
/// | `webimage_loads_total` | counter | `source`: memory, disk, network, error; `error`: the kind |
/// | `webimage_downloaded_bytes_total` | counter | |
/// | `webimage_decodes_total`, `webimage_transforms_total` | counter | |
/// | `webimage_stage_duration_seconds` | timer | `stage`: queue, connect, first_byte, download, decode, transform, store |
/// | `webimage_transfers_in_flight` | gauge | |
/// | `webimage_memory_cache_cost_bytes` | gauge | `cache`: the namespace |
struct LoadMetrics: Sendable {
    /// A stage of a load, as the `stage` dimension names it.
    enum Stage: String, CaseIterable, Sendable {
        case queue, connect, firstByte = "first_byte", download, decode, transform, store

        /// The stage's position in `allCases`.
        var index: Int {
            switch self {
            case .queue: 0
            case .connect: 1
            case .firstByte: 2
            case .download: 3
            case .decode: 4
            case .transform: 5
            case .store: 6
            }
        }
    }

    /// The `error` dimension: what kind of failure ended a load.
    static let errorKinds = ["cancelled", "timed_out", "network", "bad_status", "decoding", "not_in_cache", "invalid_url", "other"]

    private let memoryHits = Counter(label: "webimage_loads_total", dimensions: [("source", "memory")])
    private let diskHits = Counter(label: "webimage_loads_total", dimensions: [("source", "disk")])
    private let downloads = Counter(label: "webimage_loads_total", dimensions: [("source", "network")])
    private let failures: [String: Counter] = Dictionary(uniqueKeysWithValues: LoadMetrics.errorKinds.map {
        ($0, Counter(label: "webimage_loads_total", dimensions: [("source", "error"), ("error", $0)]))
    })
    private let downloadedBytes = Counter(label: "webimage_downloaded_bytes_total")
    private let decodes = Counter(label: "webimage_decodes_total")
    private let transforms = Counter(label: "webimage_transforms_total")
    private let stages: [CoreMetrics.Timer] = Stage.allCases.map {
        CoreMetrics.Timer(label: "webimage_stage_duration_seconds", dimensions: [("stage", $0.rawValue)])
    }
    private let transfersInFlight = Gauge(label: "webimage_transfers_in_flight")
    /// Whether the metrics go to a backend: false when none was bootstrapped before this
    /// manager was made (every metric is bound to the no-op handler for good), and nothing is
    /// then counted or converted: a memory hit does not call into the no-op handler.
    private let hasBackend = type(of: MetricsSystem.factory) != NOOPMetricsHandler.self

    /// A finished call: where its image came from.
    func loaded(from cacheType: ImageCacheType) {
        guard hasBackend else { return }
        switch cacheType {
        case .memory: memoryHits.increment()
        case .disk, .all: diskHits.increment()
        default: downloads.increment()
        }
    }

    /// A failed call, by the kind of its error.
    func failed(_ error: any Error) {
        guard hasBackend else { return }
        failures[LoadMetrics.kind(of: error)]?.increment()
    }

    /// A body of `bytes` downloaded.
    func downloaded(_ bytes: Int) {
        guard hasBackend else { return }
        downloadedBytes.increment(by: bytes)
    }

    /// An image decoded.
    func decoded() {
        guard hasBackend else { return }
        decodes.increment()
    }

    /// An image transformed.
    func transformed() {
        guard hasBackend else { return }
        transforms.increment()
    }

    /// The number of transfers running now.
    func transfers(_ count: Int) {
        guard hasBackend else { return }
        transfersInFlight.record(count)
    }

    /// How long `stage` took.
    func record(_ stage: Stage, _ duration: Duration) {
        guard hasBackend else { return }
        let (seconds, attoseconds) = duration.components
        // By position, not by a dictionary: a stage hashes as its raw value, a string, six
        // times a load.
        stages[stage.index].recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// What a transfer took, from the loader's metrics.
    func recordTransfer(_ metrics: TransferMetrics) {
        record(.queue, metrics.queued)
        record(.connect, metrics.connect)
        record(.firstByte, metrics.firstByte)
        record(.download, metrics.total)
    }

    static func kind(of error: any Error) -> String {
        if error is CancellationError { return "cancelled" }
        guard let error = error as? ImageError else { return "other" }
        switch error {
        case .timedOut: return "timed_out"
        case .network, .responseTooLarge, .requestCancelledByModifier: return "network"
        case .badStatusCode, .invalidContentType: return "bad_status"
        case .decodingFailed, .emptyData, .unsupportedFormat, .undecodable, .tooLarge, .animationTooLarge: return "decoding"
        case .notInCache, .downloadNotAllowed: return "not_in_cache"
        case .invalidURL, .blacklistedURL, .addressNotAllowed, .redirectNotAllowed: return "invalid_url"
        default: return "other"
        }
    }
}

import Synchronization

/// What one HTTP transfer took, as libcurl measured it (Nuke's `ImageTaskMetrics`, SDWebImage's
/// download metrics, URLSession's `URLSessionTaskTransactionMetrics`). The durations count from
/// the moment the transfer left the loader's queue, as curl's `--write-out` timings do.
public struct TransferMetrics: Sendable, Equatable {
    /// Time spent in the loader's queue before the transfer started.
    public var queued: Duration
    /// Until the name was resolved (`CURLINFO_NAMELOOKUP_TIME_T`).
    public var nameLookup: Duration
    /// Until the TCP connection was made (`CURLINFO_CONNECT_TIME_T`).
    public var connect: Duration
    /// Until the TLS handshake was done (`CURLINFO_APPCONNECT_TIME_T`; zero without TLS).
    public var tlsHandshake: Duration
    /// Until the first byte of the response (`CURLINFO_STARTTRANSFER_TIME_T`).
    public var firstByte: Duration
    /// Until the transfer ended (`CURLINFO_TOTAL_TIME_T`).
    public var total: Duration
    /// Body bytes received (before content decoding's expansion, as sent).
    public var bytesReceived: Int64
    /// Whether the transfer went over a connection kept from an earlier one.
    public var reusedConnection: Bool
    /// The HTTP version used: "1.0", "1.1", "2" or "3".
    public var httpVersion: String
    /// Redirects followed.
    public var redirects: Int

    /// Metrics with every value given.
    public init(queued: Duration, nameLookup: Duration, connect: Duration, tlsHandshake: Duration, firstByte: Duration,
                total: Duration, bytesReceived: Int64, reusedConnection: Bool, httpVersion: String, redirects: Int) {
        self.queued = queued
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.firstByte = firstByte
        self.total = total
        self.bytesReceived = bytesReceived
        self.reusedConnection = reusedConnection
        self.httpVersion = httpVersion
        self.redirects = redirects
    }
}

/// Where a transfer leaves its metrics when it ends, for the manager (a streamed transfer has
/// no final response to carry them).
final class TransferMetricsRecorder: Sendable {
    private let value = Mutex<TransferMetrics?>(nil)

    /// The metrics of the transfer that ended, if any.
    var metrics: TransferMetrics? { value.withLock { $0 } }

    func record(_ metrics: TransferMetrics) { value.withLock { $0 = metrics } }
}

/// A transfer's metrics in a box of their own, so that a response or a result that carries
/// them is one reference larger, not the size of every field (see
/// `ImageLoaderResponse.metrics` and `ImageResult.transferMetrics`).
final class MeasuredTransfer: Sendable {
    let metrics: TransferMetrics
    init(_ metrics: TransferMetrics) { self.metrics = metrics }
}

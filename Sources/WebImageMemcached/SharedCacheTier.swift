import CoreMetrics
import Foundation
import Logging
import Synchronization
import WebImage

/// A memcached tier shared by every machine of a fleet, between each machine's disk cache and
/// the origin (memcached through libmemcached, ketama consistent hashing over the nodes).
///
/// Faults are misses, never errors: a node that is down, slow or gives bytes that are not an
/// entry makes that lookup a miss (a corrupt entry is deleted), and the load goes on to the
/// origin. A failed node leaves the ring and is tried again after `retryDelay`. The first fault
/// is logged as one warning.
///
/// Plug it in with `TieredImageCache`; use it directly to share other bytes.
public final class SharedCacheTier: Sendable {
    /// The configuration in force.
    public let configuration: SharedCacheConfiguration
    private let connections: [MemcachedConnection]
    private let turn = Atomic<Int>(0)
    private let counters = SharedCacheCounters()
    private let warned = Atomic<Bool>(false)
    /// The keys whose lease this machine holds (its store ends them).
    private let leases = Mutex(Set<String>())
    private let logger: Logger

    /// A tier over `configuration`'s nodes; no connection is made before the first call.
    /// - Throws: `SharedCacheError.invalidConfiguration` for no server, no connection or a
    ///   namespace that is not a short plain name.
    public init(_ configuration: SharedCacheConfiguration, logger: Logger = Logger(label: "webimage.shared-cache")) throws(SharedCacheError) {
        guard !configuration.servers.isEmpty else { throw .invalidConfiguration("no server") }
        guard configuration.connections > 0 else { throw .invalidConfiguration("connections must be at least 1") }
        let namespace = configuration.namespace
        guard !namespace.isEmpty, namespace.utf8.count <= 64,
              namespace.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
            throw .invalidConfiguration("the namespace must be 1 to 64 printable ASCII characters without spaces")
        }
        self.configuration = configuration
        self.logger = logger
        var connections: [MemcachedConnection] = []
        for index in 0..<configuration.connections { connections.append(try MemcachedConnection(configuration, index: index)) }
        self.connections = connections
    }

    /// The counters so far.
    public var statistics: SharedCacheStatistics { counters.snapshot }

    /// The memcached key of a library key: the format version, the namespace and the SHA-256 of
    /// the key (memcached keys are at most 250 bytes, without spaces or control characters).
    func tierKey(_ key: String, lease: Bool = false) -> String {
        "wi\(SharedCacheEntry.version):\(configuration.namespace):\(lease ? "lease:" : "")\(Digest.sha256(Data(key.utf8)))"
    }

    private var connection: MemcachedConnection {
        connections[turn.add(1, ordering: .relaxed).newValue % connections.count]
    }

    /// The entry stored under `key`, or nil (missing, unreachable, or not an entry: then deleted).
    func entry(forKey key: String) async -> SharedCacheEntry? {
        let tierKey = tierKey(key)
        switch await connection.get(tierKey) {
        case .ok(let bytes?):
            if let entry = SharedCacheEntry(decoding: bytes) { return entry }
            await discardCorrupt(key)
            return nil
        case .ok(nil), .absent, .tooLarge:
            return nil
        case .failed(let reason):
            fault(reason)
            return nil
        }
    }

    /// The encoded bytes stored under `key` by any machine, or nil.
    public func data(forKey key: String) async -> Data? {
        let entry = await entry(forKey: key)
        counters.count(entry == nil ? .miss : .hit)
        return entry?.data
    }

    /// Stores `data` (and `validators`) under `key` for the fleet, then lets go of the key's
    /// lease. An entry over `maximumEntrySize` or the server's limit is skipped and counted.
    /// Returns whether the entry was stored.
    @discardableResult
    public func store(_ data: Data, validators: Data? = nil, forKey key: String) async -> Bool {
        let stored = await put(SharedCacheEntry(data: data, validators: validators).encoded(), forKey: key)
        if leases.withLock({ $0.remove(key) != nil }) { _ = await connection.delete(tierKey(key, lease: true)) }
        return stored
    }

    func put(_ bytes: Data, forKey key: String) async -> Bool {
        guard bytes.count <= configuration.maximumEntrySize else {
            counters.count(.skippedLarge)
            return false
        }
        switch await connection.store(tierKey(key), bytes, lifetime: Self.seconds(configuration.entryLifetime)) {
        case .ok: return true
        case .tooLarge:
            counters.count(.skippedLarge)
            return false
        case .absent: return false
        case .failed(let reason):
            fault(reason)
            return false
        }
    }

    /// Removes the entry under `key` from the tier.
    public func remove(forKey key: String) async {
        if case .failed(let reason) = await connection.delete(tierKey(key)) { fault(reason) }
    }

    /// Fleet-wide single flight for a missing `key`: true when this machine took the lease (it
    /// fetches from the origin and its `store` ends the lease) or when the tier cannot be asked;
    /// false when another machine holds it.
    func takeLease(forKey key: String) async -> Bool {
        switch await connection.store(tierKey(key, lease: true), Data("1".utf8), lifetime: Self.seconds(configuration.leaseLifetime),
                                      onlyIfAbsent: true) {
        case .ok:
            leases.withLock { _ = $0.insert(key) }
            return true
        case .absent: return false
        case .tooLarge: return true
        case .failed(let reason):
            fault(reason)
            return true
        }
    }

    /// The entry for a missing `key` once another machine's lease on it ends: polls with
    /// backoff for at most `leaseWait`; nil when it did not come (fetch it yourself).
    func waitForEntry(forKey key: String) async -> SharedCacheEntry? {
        counters.count(.leaseWait)
        let deadline = ContinuousClock.now + configuration.leaseWait
        var pause = Duration.milliseconds(5)
        while ContinuousClock.now < deadline {
            do { try await Task.sleep(for: min(pause, deadline - ContinuousClock.now)) } catch { return nil }
            if let entry = await entry(forKey: key) { return entry }
            // The lease is gone and no value came (its holder failed): stop waiting.
            if await leaseIsGone(key) { return await entry(forKey: key) }
            pause = min(pause * 2, .milliseconds(200))
        }
        return nil
    }

    private func leaseIsGone(_ key: String) async -> Bool {
        if case .absent = await connection.get(tierKey(key, lease: true)) { return true }
        return false
    }

    /// Deletes a stored value that is not an entry of this format.
    func discardCorrupt(_ key: String) async {
        counters.count(.corrupt)
        _ = await connection.delete(tierKey(key))
    }

    /// Counts a lookup's result (the image cache decides what a hit is: an entry that decodes).
    func count(_ event: SharedCacheCounters.Event) { counters.count(event) }

    /// The node `key` maps to now (`host:port`), for tests and diagnostics.
    public func server(forKey key: String) async -> String? { await connections[0].server(forKey: tierKey(key)) }

    private func fault(_ reason: String) {
        counters.count(.error)
        if !warned.exchange(true, ordering: .relaxed) {
            logger.warning("shared cache tier: \(reason); loads go on to the origin while a node is down (logged once)")
        }
    }

    private static func seconds(_ duration: Duration) -> Int { max(1, Int(duration.components.seconds)) }
}

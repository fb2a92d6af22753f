import Foundation

/// How a `SharedCacheTier` reaches its memcached nodes and what it keeps there.
public struct SharedCacheConfiguration: Sendable {
    /// One memcached node.
    public struct Server: Sendable, Hashable, CustomStringConvertible {
        /// Host name or address.
        public var host: String
        /// TCP port (memcached's default is 11211).
        public var port: Int

        /// A node at `host:port`.
        public init(host: String, port: Int = 11211) {
            self.host = host
            self.port = port
        }

        /// `host:port`.
        public var description: String { "\(host):\(port)" }
    }

    /// The nodes; keys are spread over them by ketama consistent hashing, so that a node that
    /// leaves or comes back moves only its own share of the keys.
    public var servers: [Server]
    /// How long an entry lives in the tier (default: a week, the disk cache's default max age).
    public var entryLifetime: Duration
    /// How long a lease on a missing key holds other machines back while its holder fetches
    /// from the origin (default 3 s): a holder that crashes costs the fleet at most this.
    public var leaseLifetime: Duration
    /// How long a machine that finds a lease waits for the value before it fetches itself
    /// (default 3 s), polling with backoff.
    public var leaseWait: Duration
    /// The largest entry sent (default 1 MiB minus room for the item's header, memcached's own
    /// default item size limit); larger ones are skipped and counted, not an error.
    public var maximumEntrySize: Int
    /// The connect timeout (default 50 ms).
    public var connectTimeout: Duration
    /// The timeout of one network wait of an operation (default 100 ms): a slow node makes
    /// its lookups misses.
    public var ioTimeout: Duration
    /// How long a node that failed stays out of the ring before it is tried again (default 2 s;
    /// libmemcached counts in whole seconds).
    public var retryDelay: Duration
    /// Connections (each on a thread of its own), used in turn (default 2).
    public var connections: Int
    /// A prefix that separates fleets or environments sharing nodes (default "default").
    public var namespace: String

    /// A configuration; every argument has the documented default.
    public init(servers: [Server], entryLifetime: Duration = .seconds(7 * 24 * 3600), leaseLifetime: Duration = .seconds(3),
                leaseWait: Duration = .seconds(3), maximumEntrySize: Int = (1 << 20) - 512,
                connectTimeout: Duration = .milliseconds(50), ioTimeout: Duration = .milliseconds(100),
                retryDelay: Duration = .seconds(2), connections: Int = 2, namespace: String = "default") {
        self.servers = servers
        self.entryLifetime = entryLifetime
        self.leaseLifetime = leaseLifetime
        self.leaseWait = leaseWait
        self.maximumEntrySize = maximumEntrySize
        self.connectTimeout = connectTimeout
        self.ioTimeout = ioTimeout
        self.retryDelay = retryDelay
        self.connections = connections
        self.namespace = namespace
    }

    /// The servers of a `memcached://host1:11211,host2:11211` URL (the port defaults to 11211).
    /// - Throws: `SharedCacheError.invalidServerList` saying what is wrong.
    public static func servers(from url: String) throws(SharedCacheError) -> [Server] {
        let prefix = "memcached://"
        guard url.lowercased().hasPrefix(prefix) else { throw .invalidServerList(url, reason: "it does not start with memcached://") }
        let list = url.dropFirst(prefix.count).split(separator: ",", omittingEmptySubsequences: false)
        return try list.map { item throws(SharedCacheError) -> Server in
            let item = item.trimmingCharacters(in: .whitespaces)
            guard !item.isEmpty else { throw .invalidServerList(url, reason: "a server is empty") }
            guard let colon = item.lastIndex(of: ":") else { return Server(host: item) }
            let host = String(item[..<colon]), portText = item[item.index(after: colon)...]
            guard !host.isEmpty else { throw .invalidServerList(url, reason: "\(item) has no host") }
            guard let port = Int(portText), (1...65535).contains(port) else {
                throw .invalidServerList(url, reason: "\(item) has no port from 1 to 65535")
            }
            return Server(host: host, port: port)
        }
    }
}

/// Errors of the shared cache tier's setup. Lookups and stores never throw: a fault is a miss.
public enum SharedCacheError: Error, Equatable, CustomStringConvertible {
    /// The server list could not be read.
    case invalidServerList(String, reason: String)
    /// The configuration cannot work (no server, a bad namespace, ...).
    case invalidConfiguration(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidServerList(let list, let reason): "invalid memcached server list \"\(list)\": \(reason)"
        case .invalidConfiguration(let reason): "invalid shared cache configuration: \(reason)"
        }
    }
}

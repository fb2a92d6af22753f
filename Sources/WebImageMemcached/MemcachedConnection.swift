import CMemcached
import Foundation
import WebImage

/// What one memcached operation gave.
enum MemcachedReply: Sendable, Equatable {
    /// Done (stored, deleted, found: the value, when there is one).
    case ok(Data?)
    /// Not found (get, delete) or not stored (add of a key that exists).
    case absent
    /// The item is over the server's size limit.
    case tooLarge
    /// The node could not be reached or did not answer in time, or any other failure.
    case failed(String)
}

/// One libmemcached handle over every node, confined to a thread of its own: the blocking C
/// calls never run on the cooperative pool. Each connection has its own handle (libmemcached's
/// handles are not thread-safe) and its own record of failed nodes.
actor MemcachedConnection {
    private nonisolated let executor: ThreadExecutor
    private let handle: UnsafeMutablePointer<memcached_st>
    /// Nodes that failed an operation (a timeout, a reset), by `host:port`, and until when they
    /// are skipped: libmemcached does not count a node that accepts and never answers as failed,
    /// so without this every lookup would wait out the timeout again. One timeout a connection
    /// per `retryDelay`, then misses at once.
    private var failedUntil: [String: ContinuousClock.Instant] = [:]
    private let retryDelay: Duration
    /// Whether the last operation ended in a timeout (a reset or a refused connection is
    /// libmemcached's own to handle: it reconnects or removes the node).
    private var lastTimedOut = false

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// A handle over `configuration`'s servers (no connection is made before the first call).
    init(_ configuration: SharedCacheConfiguration, index: Int) throws(SharedCacheError) {
        guard let handle = memcached_create(nil) else { throw .invalidConfiguration("libmemcached could not make a handle") }
        func set(_ behavior: memcached_behavior_t, _ value: UInt64) { _ = memcached_behavior_set(handle, behavior, value) }
        func milliseconds(_ duration: Duration) -> UInt64 {
            UInt64(max(1, duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000))
        }
        set(MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1)
        // Ketama: consistent hashing, so a node that leaves moves only its own keys.
        set(MEMCACHED_BEHAVIOR_KETAMA, 1)
        set(MEMCACHED_BEHAVIOR_TCP_NODELAY, 1)
        set(MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, milliseconds(configuration.connectTimeout))
        set(MEMCACHED_BEHAVIOR_POLL_TIMEOUT, milliseconds(configuration.ioTimeout))
        set(MEMCACHED_BEHAVIOR_SND_TIMEOUT, milliseconds(configuration.ioTimeout) * 1000)
        set(MEMCACHED_BEHAVIOR_RCV_TIMEOUT, milliseconds(configuration.ioTimeout) * 1000)
        // A node that fails once leaves the ring and is tried again after the retry delay.
        set(MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 1)
        set(MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT, 1)
        set(MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, UInt64(max(1, configuration.retryDelay.components.seconds)))
        set(MEMCACHED_BEHAVIOR_DEAD_TIMEOUT, UInt64(max(1, configuration.retryDelay.components.seconds)))
        for server in configuration.servers {
            let rc = memcached_server_add(handle, server.host, in_port_t(server.port))
            guard rc == MEMCACHED_SUCCESS else {
                memcached_free(handle)
                throw .invalidConfiguration("libmemcached refused the server \(server)")
            }
        }
        self.handle = handle
        retryDelay = configuration.retryDelay
        executor = ThreadExecutor(name: "webimage.memcached-\(index)")
    }

    /// On the connection's own thread, as every other use of the handle.
    isolated deinit {
        memcached_free(handle)
        executor.stop()
    }

    /// The reply of `operation` on the node of `key`, unless that node failed within the retry
    /// delay; a failure marks the node when it
    /// timed out.
    private func guarded(_ key: String, _ operation: () -> MemcachedReply) -> MemcachedReply {
        let node = failedUntil.isEmpty ? nil : server(forKey: key)
        if let node, let until = failedUntil[node] {
            if ContinuousClock.now < until { return .failed("the node \(node) failed within the last \(retryDelay)") }
            failedUntil[node] = nil
        }
        lastTimedOut = false
        let reply = operation()
        if case .failed = reply, lastTimedOut, let failed = node ?? server(forKey: key) {
            failedUntil[failed] = .now + retryDelay
        }
        return reply
    }

    func get(_ key: String) -> MemcachedReply { guarded(key) { rawGet(key) } }

    /// Stores `value` (`add`: only when the key is absent).
    func store(_ key: String, _ value: Data, lifetime seconds: Int, onlyIfAbsent: Bool = false) -> MemcachedReply {
        guarded(key) { rawStore(key, value, lifetime: seconds, onlyIfAbsent: onlyIfAbsent) }
    }

    func delete(_ key: String) -> MemcachedReply { guarded(key) { rawDelete(key) } }

    private func rawGet(_ key: String) -> MemcachedReply {
        var length = 0, flags: UInt32 = 0
        var rc = MEMCACHED_SUCCESS
        let value = key.withCString { memcached_get(handle, $0, strlen($0), &length, &flags, &rc) }
        defer { free(value) }
        switch rc {
        case MEMCACHED_SUCCESS: return .ok(value.map { Data(bytes: $0, count: length) } ?? Data())
        case MEMCACHED_NOTFOUND: return .absent
        default: return failure(rc)
        }
    }

    private func rawStore(_ key: String, _ value: Data, lifetime seconds: Int, onlyIfAbsent: Bool) -> MemcachedReply {
        let rc = key.withCString { key in
            value.withUnsafeBytes { bytes in
                let pointer = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
                return onlyIfAbsent
                    ? memcached_add(handle, key, strlen(key), pointer, bytes.count, time_t(seconds), 0)
                    : memcached_set(handle, key, strlen(key), pointer, bytes.count, time_t(seconds), 0)
            }
        }
        switch rc {
        case MEMCACHED_SUCCESS: return .ok(nil)
        case MEMCACHED_NOTSTORED, MEMCACHED_DATA_EXISTS: return .absent
        case MEMCACHED_E2BIG: return .tooLarge
        default: return failure(rc)
        }
    }

    private func rawDelete(_ key: String) -> MemcachedReply {
        let rc = key.withCString { memcached_delete(handle, $0, strlen($0), 0) }
        switch rc {
        case MEMCACHED_SUCCESS: return .ok(nil)
        case MEMCACHED_NOTFOUND: return .absent
        default: return failure(rc)
        }
    }

    /// The node `key` maps to now (`host:port`), for tests and diagnostics.
    func server(forKey key: String) -> String? {
        var rc = MEMCACHED_SUCCESS
        guard let instance = key.withCString({ memcached_server_by_key(handle, $0, strlen($0), &rc) }),
              let name = memcached_server_name(instance) else { return nil }
        return "\(String(cString: name)):\(memcached_server_port(instance))"
    }

    /// The reply for a failed operation; notes whether it timed out.
    private func failure(_ rc: memcached_return_t) -> MemcachedReply {
        lastTimedOut = rc == MEMCACHED_TIMEOUT
        return .failed(String(cString: memcached_strerror(handle, rc)))
    }
}

import Foundation
import HummingbirdCore
import NIOCore
import NIOHTTP1
import Synchronization

/// How many connections the server keeps, from the process's descriptor limit: the soft limit is
/// raised to the hard one at start, a reserve is kept for the server's own files and sockets
/// (the loader's connections, cache files, memcached), and the rest is the connection cap. At the
/// cap the server stops accepting (no `EMFILE` loop that spins on the listening socket); before
/// it, the connection idle the longest (no request in progress: a new one whose headers have not
/// come, or a keep-alive one between requests) is closed to make room, as nginx reuses its idle
/// keep-alive connections when it runs short. A sweep closes connections idle for longer than the
/// idle timeout (no timer per request).
struct ConnectionLimits: Sendable {
    /// The descriptor limit the process runs with.
    let descriptors: Int
    /// The most connections open at once.
    let maximum: Int
    /// From this many open connections on, each new one closes the longest-idle one.
    let evictionThreshold: Int

    /// The limits for a configured `maximum` (nil: from the descriptor limit).
    init(configured: Int?, descriptors: Int = ConnectionLimits.raiseDescriptorLimit()) {
        self.descriptors = descriptors
        let reserve = max(64, descriptors / 8)
        maximum = max(8, min(configured ?? Int.max, descriptors - reserve))
        evictionThreshold = max(4, maximum - max(4, maximum / 16))
    }

    /// Raises the soft `RLIMIT_NOFILE` to the hard limit (a service usually starts at 1024) and
    /// returns the limit in force.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(min(limit.rlim_cur, 1 << 20))   // RLIM_INFINITY is the largest value
    }
}

/// The open connections and which of them are idle. Thread-safe: connections open and close on
/// every event loop. A request's start and end touch only its own connection's atomic (no lock);
/// the registry's lock is taken when a connection opens or closes, and by the sweep.
final class OpenConnections: Sendable {
    /// One connection: its channel, and since when it has had no request in progress
    /// (nanoseconds of `clock`; 0 while a request is in progress).
    final class Connection: Sendable {
        let channel: any Channel
        let idleSince: Atomic<UInt64>

        init(channel: any Channel, now: UInt64) {
            self.channel = channel
            idleSince = Atomic(now)
        }
    }
    private let registry = Mutex<[ObjectIdentifier: Connection]>([:])
    private let start = ContinuousClock.now
    let limits: ConnectionLimits

    init(limits: ConnectionLimits) { self.limits = limits }

    /// Connections open now.
    var count: Int { registry.withLock { $0.count } }

    /// Nanoseconds since this registry was made (never 0).
    func now() -> UInt64 {
        let elapsed = ContinuousClock.now - start
        return UInt64(elapsed.components.seconds) * 1_000_000_000 + UInt64(elapsed.components.attoseconds / 1_000_000_000) + 1
    }

    /// A new connection, idle until its request's head arrives. Past the eviction threshold the
    /// longest-idle other connection is closed.
    func opened(_ channel: any Channel) -> Connection {
        let connection = Connection(channel: channel, now: now())
        let victim = registry.withLock { registry -> (any Channel)? in
            registry[ObjectIdentifier(channel)] = connection
            guard registry.count > limits.evictionThreshold else { return nil }
            var oldest: (key: ObjectIdentifier, since: UInt64)?
            for (key, other) in registry where key != ObjectIdentifier(channel) {
                let since = other.idleSince.load(ordering: .relaxed)
                if since != 0, since < oldest?.since ?? .max { oldest = (key, since) }
            }
            guard let oldest else { return nil }
            return registry.removeValue(forKey: oldest.key)?.channel
        }
        victim?.close(promise: nil)
        return connection
    }

    func closed(_ channel: any Channel) {
        _ = registry.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Closes every connection idle for longer than `timeout`: new ones whose request headers
    /// have not all come, and keep-alive ones between requests.
    func closeIdle(olderThan timeout: Duration) {
        let limit = UInt64(timeout.components.seconds) * 1_000_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000)
        let now = now()
        let stale = registry.withLock { registry -> [any Channel] in
            var stale: [any Channel] = []
            for (key, connection) in registry {
                let since = connection.idleSince.load(ordering: .relaxed)
                if since != 0, now > since, now - since > limit {
                    stale.append(connection.channel)
                    registry[key] = nil
                }
            }
            return stale
        }
        for channel in stale { channel.close(promise: nil) }
    }

    /// Sweeps idle connections every quarter of `timeout` (at most every second) until cancelled.
    func sweep(every timeout: Duration) async {
        let period = min(.seconds(1), timeout / 4)
        while (try? await Task.sleep(for: period)) != nil {
            closeIdle(olderThan: timeout)
        }
    }

    /// The handler that reports one connection's life to `self` (one per connection).
    func tracker() -> ConnectionTracker { ConnectionTracker(connections: self) }
}

/// Tells `OpenConnections` when its connection opens and closes, and, as `WarmResponder` (which
/// reads every request's parts, before their conversion to HTTPTypes) tells it, when each
/// request starts and ends.
final class ConnectionTracker: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    private let connections: OpenConnections
    private var connection: OpenConnections.Connection?

    init(connections: OpenConnections) { self.connections = connections }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { register(context.channel) }
    }

    func channelActive(context: ChannelHandlerContext) {
        register(context.channel)
        context.fireChannelActive()
    }

    private func register(_ channel: any Channel) {
        guard connection == nil else { return }
        connection = connections.opened(channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connections.closed(context.channel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if connection != nil { connections.closed(context.channel) }
    }

    /// A request's head arrived: the connection is busy until its answer ends.
    func requestStarted() {
        connection?.idleSince.store(0, ordering: .relaxed)
    }

    /// A request's answer was written whole: the connection is idle from now.
    func requestEnded() {
        connection?.idleSince.store(connections.now(), ordering: .relaxed)
    }
}

/// Hummingbird's accept gate over `OpenConnections`' cap: past it, the listening socket is not
/// read (the connections wait in the kernel's backlog) instead of failing `accept` in a loop.
struct ConnectionCap: AvailableConnectionsDelegate {
    let maximum: Int
    private var open = 0

    init(maximum: Int) { self.maximum = maximum }

    mutating func connectionOpened() { open += 1 }
    mutating func connectionClosed() { open -= 1 }
    func isAcceptingNewConnections() -> Bool { open < maximum }
}

import Foundation
import HummingbirdCore
import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections the server keeps, from the process's descriptor limit: the soft limit is
/// raised to the hard one at start, a reserve is kept for the server's own files and sockets
/// (the loader's connections, cache files, memcached), and the rest is the connection cap. At the
/// cap the server stops accepting (no `EMFILE` loop that spins on the listening socket); before
/// it, the connection idle the longest (no request in progress: a new one whose headers have not
/// come, or a keep-alive one between requests) is closed to make room, as nginx reuses its idle
/// keep-alive connections when it runs short.
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
/// every event loop.
final class OpenConnections: Sendable {
    private struct Entry {
        let channel: any Channel
        /// The order it last became idle in; nil while a request is in progress.
        var idleSince: UInt64?
    }
    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var clock: UInt64 = 0
    }
    private let state = Mutex(State())
    let limits: ConnectionLimits

    init(limits: ConnectionLimits) { self.limits = limits }

    /// Connections open now.
    var count: Int { state.withLock { $0.entries.count } }

    /// A new connection, idle until its request's head arrives. Past the eviction threshold the
    /// longest-idle other connection is closed.
    func opened(_ channel: any Channel) {
        let victim = state.withLock { state -> (any Channel)? in
            state.clock += 1
            state.entries[ObjectIdentifier(channel)] = Entry(channel: channel, idleSince: state.clock)
            guard state.entries.count > limits.evictionThreshold else { return nil }
            var oldest: (key: ObjectIdentifier, since: UInt64)?
            for (key, entry) in state.entries where key != ObjectIdentifier(channel) {
                if let since = entry.idleSince, since < oldest?.since ?? .max { oldest = (key, since) }
            }
            guard let oldest else { return nil }
            return state.entries.removeValue(forKey: oldest.key)?.channel
        }
        victim?.close(promise: nil)
    }

    /// A request's head arrived on `channel`.
    func busy(_ channel: any Channel) {
        state.withLock { $0.entries[ObjectIdentifier(channel)]?.idleSince = nil }
    }

    /// `channel` answered its request and waits for the next.
    func idle(_ channel: any Channel) {
        state.withLock { state in
            state.clock += 1
            state.entries[ObjectIdentifier(channel)]?.idleSince = state.clock
        }
    }

    func closed(_ channel: any Channel) {
        _ = state.withLock { $0.entries.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// The handler that reports one connection's life to `self` (one per connection).
    func tracker() -> ConnectionTracker { ConnectionTracker(connections: self) }
}

/// Tells `OpenConnections` when its connection opens, starts and ends a request, and closes.
final class ConnectionTracker: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart
    private let connections: OpenConnections
    private var registered = false

    init(connections: OpenConnections) { self.connections = connections }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { register(context.channel) }
    }

    func channelActive(context: ChannelHandlerContext) {
        register(context.channel)
        context.fireChannelActive()
    }

    private func register(_ channel: any Channel) {
        guard !registered else { return }
        registered = true
        connections.opened(channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connections.closed(context.channel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if registered { connections.closed(context.channel) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { connections.busy(context.channel) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { connections.idle(context.channel) }
        context.write(data, promise: promise)
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

import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A TCP server on 127.0.0.1 that answers every request with a scripted byte sequence, for the
/// faults an HTTP server library will not produce: silence, non-HTTP replies, endless bodies,
/// resets at a chosen byte. It reads the request up to its blank line, then plays the path's
/// script, and again for each request on a connection the script leaves open; a request for an
/// unknown path gets its connection closed.
final class FaultServer: Sendable {
    /// One step of a reply.
    enum Step: Sendable {
        /// Writes these bytes.
        case send(Data)
        /// Waits before the next step.
        case wait(Duration)
        /// Writes `bytes` every `interval`, `count` times (nil: until the client leaves).
        case repeating(Data, every: Duration, count: Int?)
        /// Closes the connection cleanly.
        case close
        /// Closes with a TCP reset (SO_LINGER 0).
        case reset
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let scripts = Mutex<[String: [Step]]>([:])
    private let channel: Mutex<(any Channel)?> = Mutex(nil)
    private let open = Mutex(0)

    /// The port, once started.
    var port: Int { channel.withLock { $0?.localAddress?.port ?? 0 } }
    /// Connections not yet closed by either side.
    var openConnections: Int { open.withLock { $0 } }

    /// Starts listening at a free port.
    func start() async throws {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                self.open.withLock { $0 += 1 }
                return channel.pipeline.addHandler(Handler(server: self))
            }
        let bound = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        channel.withLock { $0 = bound }
    }

    /// Stops listening and closes every connection.
    func stop() async {
        let bound = channel.withLock { $0 }
        try? await bound?.close()
        try? await group.shutdownGracefully()
    }

    /// Sets the reply for `path`.
    func script(_ path: String, _ steps: [Step]) { scripts.withLock { $0[path] = steps } }
    /// The URL of `path` on this server.
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// The head of an HTTP/1.1 response: status line, headers, blank line.
    static func head(status: Int = 200, _ headers: [(String, String)]) -> Data {
        var text = "HTTP/1.1 \(status) X\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return Data((text + "\r\n").utf8)
    }

    fileprivate func steps(for path: String) -> [Step]? { scripts.withLock { $0[path] } }
    fileprivate func closed() { open.withLock { $0 -= 1 } }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let server: FaultServer
        var request = Data()
        var started = false

        init(server: FaultServer) { self.server = server }

        func channelInactive(context: ChannelHandlerContext) {
            server.closed()
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            guard !started, let bytes = buffer.readBytes(length: buffer.readableBytes) else { return }
            request.append(contentsOf: bytes)
            guard let end = request.range(of: Data("\r\n\r\n".utf8)) else { return }
            started = true
            let line = String(decoding: request[..<end.lowerBound].prefix { $0 != 0x0D }, as: UTF8.self)
            let target = line.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            let path = String(target.split(separator: "?", maxSplits: 1).first ?? "")
            guard let steps = server.steps(for: path) else {
                context.close(promise: nil)
                return
            }
            play(steps[...], context: NIOLoopBound(context, eventLoop: context.eventLoop))
        }

        private func play(_ steps: ArraySlice<Step>, context bound: NIOLoopBound<ChannelHandlerContext>) {
            let context = bound.value
            guard context.channel.isActive else { return }
            guard let step = steps.first else {
                // The reply is over and the connection open: the next request on it gets the script again.
                started = false
                request = Data()
                return
            }
            let rest = steps.dropFirst()
            switch step {
            case .send(let bytes):
                // The next step once these bytes are written: a close must not discard them.
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes))).whenComplete { _ in
                    self.play(rest, context: bound)
                }
            case .wait(let duration):
                context.eventLoop.scheduleTask(in: .nanoseconds(Int64(duration / .nanoseconds(1)))) { self.play(rest, context: bound) }
            case .repeating(let bytes, let interval, let count):
                if count == 0 { return play(rest, context: bound) }
                // A client that stopped reading: wait instead of buffering without bound.
                guard context.channel.isWritable else {
                    context.eventLoop.scheduleTask(in: .milliseconds(1)) { self.play(steps, context: bound) }
                    return
                }
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
                let next = [Step.repeating(bytes, every: interval, count: count.map { $0 - 1 })] + rest
                context.eventLoop.scheduleTask(in: .nanoseconds(Int64(interval / .nanoseconds(1)))) { self.play(next[...], context: bound) }
            case .close:
                context.close(promise: nil)
            case .reset:
                _ = (context.channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
                context.close(promise: nil)
            }
        }
    }
}

import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// An HTTP/1.1 server on 127.0.0.1 for the loader tests (swift-nio), whose routes misbehave on
/// purpose: delays, dripped and chunked bodies, lying Content-Length, resets, stalls, redirects,
/// basic auth, cookies; it counts requests per path.
final class TestHTTPServer: Sendable {
    indirect enum Route: Sendable {
        /// A complete response.
        case respond(status: Int = 200, contentType: String = "image/png", body: Data)
        /// The same after a delay.
        case delayed(Duration, Route)
        /// The body in `chunk`-byte pieces every `interval`, with its Content-Length.
        case drip(body: Data, chunk: Int, interval: Duration)
        /// Transfer-Encoding: chunked.
        case chunked(body: Data, chunk: Int)
        /// Announces `claimed` bytes, sends `body`, then closes.
        case lyingLength(claimed: Int, body: Data)
        /// Announces the whole body, sends `bytes` of it, then resets the connection.
        case resetAfter(bytes: Int, body: Data)
        /// Announces the whole body, sends `bytes` of it, then sends nothing more.
        case stallAfter(bytes: Int, body: Data)
        /// A redirect to `location`.
        case redirect(to: String, status: Int = 302)
        /// 401 unless the request has these basic credentials.
        case basicAuth(user: String, password: String, then: Route)
        /// Sets a cookie, then answers `then`.
        case setCookie(String, then: Route)
        /// 403 unless the request carries this cookie.
        case requireCookie(String, then: Route)
        /// 304 when the request's If-None-Match is `etag`, else the body with that ETag.
        case etag(String, contentType: String = "image/png", body: Data)
        /// The nth request of the path gets the nth route (the last one from then on).
        case sequence([Route])
        /// `then`, with these response headers added.
        case headers([(String, String)], then: Route)
        /// A server that takes byte ranges: `Accept-Ranges: bytes` and `etag`; a request with
        /// `Range: bytes=N-` and a matching `If-Range` gets a 206 with the rest. With
        /// `resetAfter`, the connection is reset after that many bytes of the body.
        case ranged(etag: String, body: Data, resetAfter: Int? = nil)
        /// No response at all: the connection is reset as soon as the request arrived.
        case dropConnection
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let routes = Mutex<[String: Route]>([:])
    private let counts = Mutex<[String: Int]>([:])
    private let lastHeaders = Mutex<[String: [(String, String)]]>([:])
    private let channel: Mutex<(any Channel)?> = Mutex(nil)
    private let connections = Mutex(0)
    private let closedAt = Mutex<[ContinuousClock.Instant]>([])
    private let order = Mutex<[String]>([])
    fileprivate let sent = Mutex(0)

    /// Body bytes written so far, over every path.
    var bodyBytesSent: Int { sent.withLock { $0 } }

    /// When each connection closed, in order.
    var connectionCloses: [ContinuousClock.Instant] { closedAt.withLock { $0 } }
    /// Request URIs (path and query) in the order they arrived.
    var requestOrder: [String] { order.withLock { $0 } }

    /// TCP connections accepted so far.
    var connectionCount: Int { connections.withLock { $0 } }

    /// The port, once started.
    var port: Int { channel.withLock { $0?.localAddress?.port ?? 0 } }

    /// The address it listens on.
    private let host = Mutex("127.0.0.1")

    /// Starts listening on `host` (127.0.0.1 unless said) at a free port.
    func start(host: String = "127.0.0.1") async throws {
        self.host.withLock { $0 = host }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                self.connections.withLock { $0 += 1 }
                return channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(server: self))
                }
            }
        let bound = try await bootstrap.bind(host: host, port: 0).get()
        channel.withLock { $0 = bound }
    }

    /// Stops the server.
    func stop() async {
        let bound = channel.withLock { $0 }
        try? await bound?.close()
        try? await group.shutdownGracefully()
    }

    func route(_ path: String, _ route: Route) { routes.withLock { $0[path] = route } }
    func url(_ path: String) -> URL { URL(string: "http://\(host.withLock { $0 }):\(port)\(path)")! }
    func requestCount(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }
    func headers(of path: String) -> [(String, String)] { lastHeaders.withLock { $0[path] ?? [] } }

    fileprivate func record(_ head: HTTPRequestHead) -> Route? {
        let path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "")
        counts.withLock { $0[path, default: 0] += 1 }
        order.withLock { $0.append(head.uri) }
        lastHeaders.withLock { $0[path] = head.headers.map { ($0.name, $0.value) } }
        return routes.withLock { $0[path] }
    }

    // Sendable by hand: a handler is used only on its own channel's event loop.
    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let server: TestHTTPServer
        var head: HTTPRequestHead?

        init(server: TestHTTPServer) { self.server = server }

        func channelInactive(context: ChannelHandlerContext) {
            server.closedAt.withLock { $0.append(.now) }
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): self.head = head
            case .body: break
            case .end:
                guard let head else { return }
                let route = server.record(head) ?? .respond(status: 404, contentType: "text/html", body: Data("<h1>Not Found</h1>".utf8))
                serve(route, head: head, context: context)
            }
        }

        private func writeHead(_ context: ChannelHandlerContext, status: Int, headers: [(String, String)]) {
            var fields = HTTPHeaders(headers)
            if !fields.contains(name: "connection") { fields.add(name: "connection", value: "keep-alive") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: fields))), promise: nil)
        }

        private func writeBody(_ context: ChannelHandlerContext, _ bytes: Data) {
            server.sent.withLock { $0 += bytes.count }
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: bytes)))), promise: nil)
        }

        private func serve(_ route: Route, head: HTTPRequestHead, context: ChannelHandlerContext, extra: [(String, String)] = []) {
            let loop = context.eventLoop
            switch route {
            case .ranged(let etag, let body, let resetAfter):
                let ranges = [("accept-ranges", "bytes"), ("etag", etag)]
                var start = 0
                if let range = head.headers.first(name: "range"), range.hasPrefix("bytes="), head.headers.first(name: "if-range") == etag,
                   let first = Int(range.dropFirst(6).split(separator: "-").first ?? ""), first < body.count {
                    start = first
                }
                let rest = body.dropFirst(start)
                if let resetAfter {
                    serve(.resetAfter(bytes: resetAfter, body: Data(rest)), head: head, context: context, extra: extra + ranges)
                } else if start > 0 {
                    serve(.respond(status: 206, body: Data(rest)), head: head, context: context,
                          extra: extra + ranges + [("content-range", "bytes \(start)-\(body.count - 1)/\(body.count)")])
                } else {
                    serve(.respond(body: body), head: head, context: context, extra: extra + ranges)
                }
            case .sequence(let routes):
                let path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "")
                let index = min(max(server.requestCount(path), 1), routes.count) - 1
                serve(routes[index], head: head, context: context, extra: extra)
            case .headers(let fields, let next):
                serve(next, head: head, context: context, extra: extra + fields)
            case .respond(let status, let type, let body):
                writeHead(context, status: status, headers: [("content-type", type), ("content-length", "\(body.count)")] + extra)
                writeBody(context, body)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case .delayed(let delay, let next):
                let bound = NIOLoopBound(context, eventLoop: loop)
                loop.scheduleTask(in: .nanoseconds(Int64(delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000))) {
                    self.serve(next, head: head, context: bound.value, extra: extra)
                }
            case .drip(let body, let chunk, let interval):
                writeHead(context, status: 200, headers: [("content-type", "image/jpeg"), ("content-length", "\(body.count)")] + extra)
                context.flush()
                drip(body, offset: 0, chunk: chunk, interval: interval, context: context)
            case .chunked(let body, let chunk):
                writeHead(context, status: 200, headers: [("content-type", "image/png"), ("transfer-encoding", "chunked")] + extra)
                var offset = 0
                while offset < body.count {
                    writeBody(context, body[offset..<min(body.count, offset + chunk)])
                    offset += chunk
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case .lyingLength(let claimed, let body):
                writeHead(context, status: 200, headers: [("content-type", "image/png"), ("content-length", "\(claimed)"), ("connection", "close")])
                writeBody(context, body)
                let bound = NIOLoopBound(context, eventLoop: loop)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
            case .resetAfter(let bytes, let body):
                writeHead(context, status: 200, headers: [("content-type", "image/png"), ("content-length", "\(body.count)")] + extra)
                writeBody(context, body.prefix(bytes))
                context.flush()
                // SO_LINGER 0: close sends a TCP reset instead of a clean end.
                _ = (context.channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
                let bound = NIOLoopBound(context, eventLoop: loop)
                loop.scheduleTask(in: .milliseconds(50)) { bound.value.close(promise: nil) }
            case .dropConnection:
                _ = (context.channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
                context.close(promise: nil)
            case .stallAfter(let bytes, let body):
                writeHead(context, status: 200, headers: [("content-type", "image/png"), ("content-length", "\(body.count)")] + extra)
                writeBody(context, body.prefix(bytes))
                context.flush()
            case .etag(let tag, let type, let body):
                if head.headers["if-none-match"].first == tag {
                    writeHead(context, status: 304, headers: [("etag", tag), ("content-length", "0")] + extra)
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                } else {
                    serve(.respond(status: 200, contentType: type, body: body), head: head, context: context, extra: extra + [("etag", tag)])
                }
            case .redirect(let location, let status):
                writeHead(context, status: status, headers: [("location", location), ("content-length", "0")])
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case .basicAuth(let user, let password, let next):
                let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
                if head.headers["authorization"].first == expected {
                    serve(next, head: head, context: context, extra: extra)
                } else {
                    serve(.respond(status: 401, contentType: "text/plain", body: Data("who?".utf8)), head: head, context: context,
                          extra: [("www-authenticate", "Basic realm=\"test\"")])
                }
            case .setCookie(let cookie, let next):
                serve(next, head: head, context: context, extra: extra + [("set-cookie", "\(cookie); Path=/")])
            case .requireCookie(let cookie, let next):
                let sent = head.headers["cookie"].joined(separator: "; ")
                if sent.contains(cookie) {
                    serve(next, head: head, context: context, extra: extra)
                } else {
                    serve(.respond(status: 403, contentType: "text/plain", body: Data("no cookie".utf8)), head: head, context: context)
                }
            }
        }

        private func drip(_ body: Data, offset: Int, chunk: Int, interval: Duration, context: ChannelHandlerContext) {
            guard context.channel.isActive else { return }
            if offset >= body.count {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            writeBody(context, body[offset..<min(body.count, offset + chunk)])
            context.flush()
            let nanos = Int64(interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .nanoseconds(nanos)) {
                self.drip(body, offset: offset + chunk, chunk: chunk, interval: interval, context: bound.value)
            }
        }
    }
}

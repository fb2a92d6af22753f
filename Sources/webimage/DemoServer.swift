import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Counts requests across connections.
final class RequestCounter: Sendable {
    let count = Atomic<Int>(0)
}

/// The demo's HTTP server on 127.0.0.1 (swift-nio): serves the bundled samples, throttled so
/// that progress bars and progressive previews can be seen on a local connection.
final class DemoServer: Sendable {
    let files: [String: Data]
    let chunk: Int
    let interval: TimeAmount
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let counter = RequestCounter()

    /// Requests served so far.
    var requestCount: Int { counter.count.load(ordering: .relaxed) }
    private let channel: any Channel

    /// The port it listens on.
    var port: Int { channel.localAddress?.port ?? 0 }

    /// Starts serving `files` (by name) on `port`, or on a free port when that one is taken or 0.
    /// `note` is told when the asked port was taken.
    init(files: [String: Data], port: Int, chunk: Int = 2048, interval: TimeAmount = .milliseconds(15),
         note: (String) -> Void) async throws {
        self.files = files
        self.chunk = chunk
        self.interval = interval
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        let handlerFiles = files
        let settings = (chunk, interval)
        let counter = self.counter
        let start: (Int) async throws -> any Channel = { port in
            try await bootstrap.childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(files: handlerFiles, chunk: settings.0, interval: settings.1, counter: counter))
                }
            }.bind(host: "127.0.0.1", port: port).get()
        }
        if port != 0, let bound = try? await start(port) {
            channel = bound
        } else {
            if port != 0 { note("port \(port) is taken; using another") }
            channel = try await start(0)
        }
    }

    /// Stops listening.
    func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    // Sendable by hand: a handler is used only on its own channel's event loop.
    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let files: [String: Data]
        let chunk: Int
        let interval: TimeAmount
        let counter: RequestCounter

        init(files: [String: Data], chunk: Int, interval: TimeAmount, counter: RequestCounter) {
            self.files = files
            self.chunk = chunk
            self.interval = interval
            self.counter = counter
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            counter.count.add(1, ordering: .relaxed)
            let name = String(head.uri.split(separator: "?").first ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            guard let body = files[name] else {
                let text = Data("not found\n".utf8)
                write(context, status: .notFound, type: "text/plain", body: text, offset: 0)
                return
            }
            write(context, status: .ok, type: DemoServer.mimeType(name), body: body, offset: 0)
        }

        /// Sends the head, then the body `chunk` bytes at a time every `interval`.
        private func write(_ context: ChannelHandlerContext, status: HTTPResponseStatus, type: String, body: Data, offset: Int) {
            if offset == 0 {
                let headers = HTTPHeaders([("content-type", type), ("content-length", "\(body.count)"), ("connection", "keep-alive")])
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            }
            let end = min(body.count, offset + chunk)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body[offset..<end])))),
                                  promise: nil)
            guard end < body.count else {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: interval) {
                let context = bound.value
                guard context.channel.isActive else { return }
                self.write(context, status: status, type: type, body: body, offset: end)
            }
        }
    }

    static func mimeType(_ name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "webp": "image/webp"
        default: "application/octet-stream"
        }
    }
}

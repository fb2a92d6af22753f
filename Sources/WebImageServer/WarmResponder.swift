import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import WebImage

/// Answers a request whose result is fresh in the response cache where the request was read,
/// on its connection's event loop, with `ImageServer.warmAnswer` (the response `respond` would
/// give, counted and logged the same): a warm request then costs no hop to the task pool and
/// back. It reads HTTP/1's own parts, before Hummingbird converts them to HTTPTypes
/// (`WarmHTTP1Channel` places it there), so that a warm request costs no conversion either.
/// Any other request goes on to the responder, and while one of those is being answered every
/// request after it on the connection does too, so that answers keep the requests' order.
final class WarmResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ImageServer
    /// Requests passed on whose answers have not ended.
    private var passedOn = 0
    /// Whether the parts of the request being read are answered here (and not passed on).
    private var answered = false

    init(server: ImageServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let request):
            answered = false
            // A request that closes its connection (or an HTTP/1.0 one) goes on: the responder closes it.
            if passedOn == 0, request.method == .GET, request.isKeepAlive, let path = Self.path(of: request.uri),
               let answer = server.warmAnswer(path: path, accept: request.headers.first(name: "accept"),
                                              ifNoneMatch: request.headers.first(name: "if-none-match")) {
                answered = true
                var headers = HTTPHeaders()
                headers.reserveCapacity(answer.headers.count)
                for field in answer.headers { headers.add(name: field.name.rawName, value: field.value) }
                let head = HTTPResponseHead(version: request.version, status: .init(statusCode: answer.status.code), headers: headers)
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                if let body = answer.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            passedOn += 1
            context.fireChannelRead(data)
        case .body, .end:
            if !answered { context.fireChannelRead(data) }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { passedOn = max(0, passedOn - 1) }
        context.write(data, promise: promise)
    }

    /// A request target's path without its query, as Hummingbird's `URI.path` reads it; nil for
    /// a target that is not a path.
    static func path(of target: String) -> String? {
        guard target.utf8.first == UInt8(ascii: "/") else { return nil }
        // Over the bytes themselves: the UTF-8 view's own iteration is far slower.
        var target = target
        guard let end = target.withUTF8({ bytes in bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } })
        else { return target }
        return String(Substring(target.utf8.prefix(end)))
    }
}

/// The `Date` header of answers made here (Hummingbird adds it to the responder's), formatted
/// once a second.
final class DateHeader: Sendable {
    private let current = Mutex<(second: Int, text: String)>((-1, ""))

    /// Now, as an IMF-fixdate.
    var value: String {
        let second = Int(Date().timeIntervalSince1970)
        return current.withLock { current in
            if current.second != second { current = (second, HTTPDate.format(Date(timeIntervalSince1970: Double(second)))) }
            return current.text
        }
    }
}

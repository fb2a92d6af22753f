import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization
import WebImage

/// Answers a request whose result is fresh in the response cache where the request was read,
/// on its connection's event loop, with `ImageServer.warmAnswer` (the response `respond` would
/// give, counted and logged the same): a warm request then costs no hop to the task pool and
/// back. Any other request goes on to the responder, and while one of those is being answered
/// every request after it on the connection does too, so that answers keep the requests' order.
final class WarmResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

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
            if passedOn == 0, request.headerFields[.connection] != "close", let path = Self.path(of: request),
               let answer = server.warmAnswer(method: request.method, path: path, headers: request.headerFields) {
                answered = true
                context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: answer.headers))), promise: nil)
                if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
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

    /// The request's path without its query, as Hummingbird's `URI.path` reads it; nil for a
    /// request target that is not a path.
    static func path(of request: HTTPRequest) -> String? {
        guard let target = request.path, target.utf8.first == UInt8(ascii: "/") else { return nil }
        guard let end = target.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else { return target }
        return String(target[..<end])
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

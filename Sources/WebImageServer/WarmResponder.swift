import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import Synchronization
import WebImage

/// Answers a request whose result is fresh in the response cache where the request was read,
/// on its connection's event loop, with `ImageServer.warmAnswer` (the response `respond` would
/// give, counted and logged the same): a warm request then costs no hop to the task pool and
/// back. It reads HTTP/1's own parts, before Hummingbird converts them to HTTPTypes
/// (`WarmHTTP1Channel` places it there), so that a warm request costs no conversion either, and
/// writes the answer's head as HTTP/1.1 bytes straight to the socket's side of the response
/// encoder: no `HTTPHeaders` is built for it, and nothing between reads it back.
/// Any other request goes on to the responder, and while one of those is being answered every
/// request after it on the connection does too, so that answers keep the requests' order.
/// It tells the connection's tracker when each request starts and ends, the ones answered here
/// included (the only handler that reads every request's parts).
final class WarmResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ImageServer
    private let tracker: ConnectionTracker
    /// Where an answer's bytes are written: the context of the response encoder (writes from it
    /// go on to the socket); nil when the pipeline has none, and then nothing is answered here.
    private var wire: ChannelHandlerContext?
    /// Requests passed on whose answers have not ended.
    private var passedOn = 0
    /// Whether the parts of the request being read are answered here (and not passed on).
    private var answered = false

    init(server: ImageServer, tracker: ConnectionTracker) {
        self.server = server
        self.tracker = tracker
    }

    func handlerAdded(context: ChannelHandlerContext) {
        wire = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        wire = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let request):
            tracker.requestStarted()
            answered = false
            // A request that closes its connection (or an HTTP/1.0 one) goes on: the responder closes it.
            if passedOn == 0, let wire, request.method == .GET, request.version == .http1_1, request.isKeepAlive,
               let path = Self.path(of: request.uri),
               let answer = server.warmAnswer(path: path, accept: request.headers.first(name: "accept"),
                                              ifNoneMatch: request.headers.first(name: "if-none-match")) {
                answered = true
                wire.write(NIOAny(Self.head(of: answer, allocator: context.channel.allocator)), promise: nil)
                if let body = answer.body { wire.write(NIOAny(body), promise: nil) }
                wire.flush()
                tracker.requestEnded()
                return
            }
            passedOn += 1
            context.fireChannelRead(data)
        case .body, .end:
            if !answered { context.fireChannelRead(data) }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            passedOn = max(0, passedOn - 1)
            tracker.requestEnded()
        }
        context.write(data, promise: promise)
    }

    /// The status line and header fields of `answer` as an HTTP/1.1 response sends them. The
    /// fields' values are legal already (`HTTPField` makes them so: no line breaks).
    static func head(of answer: ImageServer.AnswerParts, allocator: ByteBufferAllocator) -> ByteBuffer {
        // Gathered in an array and written once: each write to a ByteBuffer checks it anew.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(320)
        bytes.append(contentsOf: "HTTP/1.1 ".utf8)
        bytes.append(contentsOf: String(answer.status.code).utf8)
        bytes.append(UInt8(ascii: " "))
        // The standard reason phrase, as NIO's encoder writes the responder's.
        bytes.append(contentsOf: HTTPResponseStatus(statusCode: answer.status.code).reasonPhrase.utf8)
        bytes.append(contentsOf: "\r\n".utf8)
        for field in answer.fields {
            bytes.append(contentsOf: field.name.rawName.utf8)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: field.value.utf8)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        bytes.append(contentsOf: "\r\n".utf8)
        return allocator.buffer(bytes: bytes)
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

/// The `Date` field of answers made here (Hummingbird adds it to the responder's), made once a
/// second.
final class DateHeader: Sendable {
    private let current = Mutex<(second: Int, field: HTTPField)>((-1, HTTPField(name: .date, value: "")))

    /// Now, as an IMF-fixdate.
    var field: HTTPField {
        let second = Int(Date().timeIntervalSince1970)
        return current.withLock { current in
            if current.second != second {
                current = (second, HTTPField(name: .date, value: HTTPDate.format(Date(timeIntervalSince1970: Double(second)))))
            }
            return current.field
        }
    }
}

import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1 channel with handlers of HTTP/1's own parts placed before its
/// conversion of them to HTTPTypes (`HTTP1ToHTTPServerCodec`): the connection's tracker and
/// `WarmResponder`, which answer and count a warm request without that conversion.
struct WarmHTTP1Channel: ServerChildChannel {
    let base: HTTP1Channel
    /// The handlers for one new connection, in pipeline order.
    let handlers: @Sendable () -> [any ChannelHandler]

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
            for handler in handlers() { try pipeline.addHandler(handler, position: .before(codec)) }
            return value
        }
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

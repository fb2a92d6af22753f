import Foundation
import Synchronization
import Tracing

/// The spans of the shared works running, so that a caller who joins one can be linked to it
/// (swift-distributed-tracing). A work's span is the child of its first caller's; each later
/// caller that carries a trace is added to it as a link.
final class WorkSpans: Sendable {
    private let spans = Mutex<[ObjectIdentifier: any Span]>([:])

    /// Runs `body` in the span of `work` ("webimage.load"), with the URL as attribute, and
    /// where the image came from and its byte count when it ends.
    func traced(_ request: LoadRequest, work: AnyObject, _ body: () async throws -> SharedResult) async throws -> SharedResult {
        try await withSpan("webimage.load", ofKind: .client) { span in
            span.attributes["url.full"] = request.urlString
            let id = ObjectIdentifier(work)
            spans.withLock { $0[id] = span }
            defer { _ = spans.withLock { $0.removeValue(forKey: id) } }
            let shared = try await body()
            span.attributes["webimage.source"] = shared.result.cacheType == .none ? "network" : "disk"
            if let data = shared.result.data { span.attributes["webimage.bytes"] = data.count }
            return shared
        }
    }

    /// A caller joined `work`: its trace (when it has one) becomes a link of the work's span.
    func joined(_ work: AnyObject) {
        guard let context = ServiceContext.current, let span = spans.withLock({ $0[ObjectIdentifier(work)] }) else { return }
        span.addLink(SpanLink(context: context, attributes: [:]))
    }
}

/// A stage of a load as a child span of the load's.
@inline(__always)
func traceStage<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
    try await withSpan(name) { _ in try await body() }
}

/// A synchronous stage of a load as a child span of the load's.
@inline(__always)
func traceStage<T>(_ name: String, _ body: () throws -> T) throws -> T {
    try withSpan(name) { _ in try body() }
}

import Foundation
import Synchronization
import Tracing

/// The spans of the shared works, so that a caller who joins one can be linked to it
/// (swift-distributed-tracing). A work's span is the child of its first caller's; each later
/// caller that carries a trace is added to it as a link, also when it joined while the work was
/// still waiting for its turn to start (its link is kept until the span exists).
final class WorkSpans: Sendable {
    /// A work's span once it runs, or the links of the callers that joined it before.
    private enum Entry {
        case waiting(links: [ServiceContext], work: Weak)
        case running(any Span)
    }

    /// A work that may have ended without starting (withdrawn from the admission queue).
    private struct Weak: @unchecked Sendable {
        weak var object: AnyObject?
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])
    /// Whether a tracer was at work when the manager was made (bootstrap it first, as the
    /// metrics backend): without one, neither a load nor a joining caller reads a trace, which
    /// costs a task-local lookup each.
    let isTracing = WorkSpans.tracerIsAtWork

    /// The trace of the caller that makes a work, to run the work in: a work that waits for
    /// admission is started from another load's task, whose trace it must not inherit.
    static func creatorContext() -> ServiceContext? { ServiceContext.current }

    /// Whether a tracer other than the no-op one is bootstrapped (or bound to the task). The
    /// no-op instrument, the usual case, is told by its type: `InstrumentationSystem.tracer`
    /// looks for a tracer with casts to a protocol, which a load should not pay for nothing.
    static var tracerIsAtWork: Bool {
        let instrument = InstrumentationSystem.instrument
        if type(of: instrument) == NoOpInstrument.self || type(of: instrument) == NoOpTracer.self { return false }
        return !(InstrumentationSystem.tracer is NoOpTracer)
    }

    /// Runs `body` in the span of `work` ("webimage.load"), a child of `parent` (the creating
    /// caller's trace), with the URL as attribute, and where the output came from and its byte
    /// count when it ends (`LoadOutput`). `body` learns whether a tracer is at work: with none
    /// (the no-op tracer, the usual case) neither the load nor its stages make a span; the
    /// tracer is looked up once per load instead of once per span. Image loads and data loads
    /// (`ImageManager.data(for:)`) alike.
    func traced<Output: LoadOutput>(_ request: LoadRequest, work: AnyObject, parent: ServiceContext?,
                                      _ body: (_ tracing: Bool) async throws -> Output) async throws -> Output {
        guard isTracing else {
            let id = ObjectIdentifier(work)
            entries.withLock { _ = $0.removeValue(forKey: id) }   // links kept for a span that is not made
            return try await body(false)
        }
        return try await withSpan("webimage.load", context: parent ?? .topLevel, ofKind: .client) { span in
            span.attributes["url.full"] = request.urlString
            let id = ObjectIdentifier(work)
            let early = entries.withLock { entries -> [ServiceContext] in
                defer { entries[id] = .running(span) }
                if case .waiting(let links, let weak) = entries[id], weak.object === work { return links }
                return []
            }
            for context in early { span.addLink(SpanLink(context: context, attributes: [:])) }
            defer { _ = entries.withLock { $0.removeValue(forKey: id) } }
            let output = try await body(true)
            span.attributes["webimage.source"] = output.source == .none ? "network" : "disk"
            if let bytes = output.byteCount { span.attributes["webimage.bytes"] = bytes }
            return output
        }
    }

    /// A caller joined `work`: its trace (when it has one) becomes a link of the work's span,
    /// now or when the span starts.
    func joined(_ work: AnyObject) {
        guard isTracing, let context = ServiceContext.current else { return }
        let id = ObjectIdentifier(work)
        let running = entries.withLock { entries -> (any Span)? in
            switch entries[id] {
            case .running(let span): return span
            case .waiting(var links, let weak) where weak.object === work:
                links.append(context)
                entries[id] = .waiting(links: links, work: weak)
            default:
                // Entries of works that ended without starting are dropped as new ones come.
                if entries.count >= 64 { entries = entries.filter { if case .waiting(_, let weak) = $0.value { weak.object != nil } else { true } } }
                entries[id] = .waiting(links: [context], work: Weak(object: work))
            }
            return nil
        }
        running?.addLink(SpanLink(context: context, attributes: [:]))
    }

    /// The number of works with a span or waiting links (for tests).
    var count: Int { entries.withLock { $0.count } }
}

/// A stage of a load as a child span of the load's, when a tracer is at work (`tracing`).
/// The span is opened one call away: inlined, its temporaries took space in the async frame
/// of every load, traced or not.
@inline(__always)
func traceStage<T>(_ name: String, _ tracing: Bool, _ body: () async throws -> T) async throws -> T {
    guard tracing else { return try await body() }
    return try await traceStage_slowPath(name, body)
}

/// `traceStage` when a tracer is at work: the stage in a span of its own.
@inline(never)
private func traceStage_slowPath<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
    try await withSpan(name) { _ in try await body() }
}

/// A synchronous stage of a load as a child span of the load's, when a tracer is at work (`tracing`).
@inline(__always)
func traceStage<T>(_ name: String, _ tracing: Bool, _ body: () throws -> T) throws -> T {
    guard tracing else { return try body() }
    return try withSpan(name) { _ in try body() }
}

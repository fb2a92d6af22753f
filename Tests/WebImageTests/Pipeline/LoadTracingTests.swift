import Foundation
import InMemoryTracing
import Instrumentation
import Testing
import Tracing
@testable import WebImage

/// swift-distributed-tracing: a span per shared load with a child span per stage, and a link
/// from the load to each caller that joined it with a trace of its own.
@Suite(.serialized) struct LoadTracingTests {
    static let tracer: InMemoryTracer = {
        let tracer = InMemoryTracer()
        InstrumentationSystem.bootstrap(tracer)
        return tracer
    }()

    /// The finished span of the load of `url`. It ends with its work, after its callers got the
    /// output (the stores follow). The tracer is the process's: tests running beside this one
    /// make spans too, so a load's span is told by its URL (and its stages by their parent).
    static func loadSpan(of url: URL) async throws -> FinishedInMemorySpan {
        let isThisLoad: (FinishedInMemorySpan) -> Bool = {
            $0.operationName == "webimage.load" && $0.attributes["url.full"]?.toSpanAttribute() == .string(url.absoluteString)
        }
        for _ in 0..<200 where !tracer.finishedSpans.contains(where: isThisLoad) {
            try await Task.sleep(for: .milliseconds(5))
        }
        return try #require(tracer.finishedSpans.first(where: isThisLoad))
    }

    @Test func aLoadIsASpanWithItsStagesAndTheCallersThatJoinedIt() async throws {
        let tracer = Self.tracer
        _ = tracer.popFinishedSpans()
        let h = try await ManagerHarness()
        h.server.route("/slow.png", .delayed(.milliseconds(300), .respond(body: ManagerHarness.png)))
        let manager = h.manager, url = h.url("/slow.png")
        let first = Task { try await withSpan("first caller") { _ in try await manager.image(for: url) } }
        for _ in 0..<200 where h.server.requestCount("/slow.png") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let joiner = try await withSpan("joining caller") { span in
            _ = try await manager.image(for: url)
            return span.context
        }
        _ = try await first.value
        let load = try await Self.loadSpan(of: url)
        let spans = tracer.finishedSpans
        let caller = try #require(spans.first { $0.operationName == "first caller" })
        #expect(load.parentSpanID == caller.spanID, "the load is a child of the caller that started it")
        #expect(load.attributes["webimage.source"]?.toSpanAttribute() == .string("network"))
        #expect(load.attributes["webimage.bytes"]?.toSpanAttribute() == .int64(Int64(ManagerHarness.png.count)))
        for stage in ["webimage.disk", "webimage.download", "webimage.decode"] {
            #expect(spans.contains { $0.operationName == stage && $0.parentSpanID == load.spanID }, "\(stage) is a stage of the load")
        }
        #expect(!spans.contains { $0.operationName == "webimage.transform" && $0.parentSpanID == load.spanID },
                "no transformer, no transform span")
        #expect(load.links.count == 1)
        #expect(load.links.first?.context.inMemorySpanContext?.spanID == joiner.inMemorySpanContext?.spanID)
        await h.finish()
    }

    /// A data load (`data(for:)`) is traced as an image load is: a span that is the child of the
    /// caller that made it, its disk query and transfer as stages, each caller that joined it a
    /// link (the data route had no span at all).
    @Test func aDataLoadIsASpanWithItsStagesAndTheCallersThatJoinedIt() async throws {
        let tracer = Self.tracer
        _ = tracer.popFinishedSpans()
        let h = try await ManagerHarness()
        h.server.route("/slow-data.png", .delayed(.milliseconds(300), .respond(body: ManagerHarness.png)))
        let manager = h.manager, url = h.url("/slow-data.png")
        let first = Task { try await withSpan("first data caller") { _ in try await manager.data(for: url) } }
        for _ in 0..<200 where h.server.requestCount("/slow-data.png") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let joiner = try await withSpan("joining data caller") { span in
            let bytes = try await manager.data(for: url)
            #expect(bytes == ManagerHarness.png)
            return span.context
        }
        #expect(try await first.value == ManagerHarness.png)
        #expect(h.server.requestCount("/slow-data.png") == 1, "the joiner shared the load")
        let load = try await Self.loadSpan(of: url)
        let spans = tracer.finishedSpans
        let caller = try #require(spans.first { $0.operationName == "first data caller" })
        #expect(load.parentSpanID == caller.spanID, "the load is a child of the caller that started it")
        #expect(load.attributes["webimage.source"]?.toSpanAttribute() == .string("network"))
        #expect(load.attributes["webimage.bytes"]?.toSpanAttribute() == .int64(Int64(ManagerHarness.png.count)))
        for stage in ["webimage.disk", "webimage.download"] {
            #expect(spans.contains { $0.operationName == stage && $0.parentSpanID == load.spanID }, "\(stage) is a stage of the data load")
        }
        #expect(!spans.contains { $0.operationName == "webimage.decode" && $0.parentSpanID == load.spanID }, "bytes are not decoded")
        #expect(load.links.map { $0.context.inMemorySpanContext?.spanID } == [joiner.inMemorySpanContext?.spanID])
        await h.finish()
    }

    /// A load that waits for admission is started from another load's task: its span is still
    /// the child of the caller that made it, and a caller that joined it while it waited is a link.
    @Test func aLoadThatWaitedForAdmissionKeepsItsCallerAndItsEarlyJoiners() async throws {
        let tracer = Self.tracer
        _ = tracer.popFinishedSpans()
        var configuration = ImageManager.Configuration()
        configuration.maximumConcurrentLoads = 1
        let h = try await ManagerHarness(configuration: configuration)
        h.server.route("/block.png", .delayed(.milliseconds(300), .respond(body: ManagerHarness.png)))
        h.server.route("/queued.png", .respond(body: ManagerHarness.png))
        let manager = h.manager, admission = h.manager.pipeline.admission
        let blocker = Task { try await withSpan("blocking caller") { _ in try await manager.image(for: h.url("/block.png")) } }
        for _ in 0..<200 where h.server.requestCount("/block.png") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let maker = Task { try await withSpan("making caller") { _ in try await manager.image(for: h.url("/queued.png")) } }
        for _ in 0..<200 where admission.counts != (1, 1) { try await Task.sleep(for: .milliseconds(5)) }
        #expect(admission.counts == (1, 1), "the second load waits for the first one's slot")
        let joiner = try await withSpan("early joiner") { span in
            _ = try await manager.image(for: h.url("/queued.png"))
            return span.context
        }
        _ = try await (blocker.value, maker.value)
        for _ in 0..<200 where tracer.finishedSpans.filter({ $0.operationName == "webimage.load" }).count < 2 {
            try await Task.sleep(for: .milliseconds(5))
        }
        let spans = tracer.finishedSpans
        let queuedURL = h.url("/queued.png").absoluteString
        let load = try #require(spans.first { $0.operationName == "webimage.load" && $0.attributes["url.full"]?.toSpanAttribute() == .string(queuedURL) })
        let makerSpan = try #require(spans.first { $0.operationName == "making caller" })
        #expect(load.parentSpanID == makerSpan.spanID, "not a child of the load whose task started it")
        #expect(load.links.map { $0.context.inMemorySpanContext?.spanID } == [joiner.inMemorySpanContext?.spanID])
        let blockLoad = try #require(spans.first { $0.operationName == "webimage.load" && $0.spanID != load.spanID })
        #expect(blockLoad.links.isEmpty, "the caller that makes a load is its parent, not a link")
        #expect(h.manager.pipeline.spans.count == 0, "nothing is kept once the loads ended")
        await h.finish()
    }
}

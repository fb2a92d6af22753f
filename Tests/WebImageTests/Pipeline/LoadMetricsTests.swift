import CoreMetrics
import Foundation
import MetricsTestKit
import Testing
@testable import WebImage

/// The manager's swift-metrics: loads by source and error, bytes, decodes, transforms, stage
/// timers and gauges, seen through MetricsTestKit's backend (bootstrapped once for the process;
/// managers made before it keep no-op handlers, so each figure is read as a difference).
@Suite(.serialized) struct LoadMetricsTests {
    static let backend: TestMetrics = {
        let backend = TestMetrics()
        MetricsSystem.bootstrap(backend)
        return backend
    }()

    func total(_ label: String, _ dimensions: [(String, String)] = []) -> Int64 {
        (try? Self.backend.expectCounter(label, dimensions).totalValue) ?? 0
    }

    func timings(_ stage: String) -> Int {
        (try? Self.backend.expectTimer("webimage_stage_duration_seconds", [("stage", stage)]).values.count) ?? 0
    }

    @Test func loadsAreCountedBySourceWithTheirStages() async throws {
        _ = Self.backend
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        h.server.route("/missing.png", .respond(status: 404, body: Data()))
        let loads = "webimage_loads_total"
        let before = (network: total(loads, [("source", "network")]), memory: total(loads, [("source", "memory")]),
                      disk: total(loads, [("source", "disk")]), failed: total(loads, [("source", "error"), ("error", "bad_status")]),
                      bytes: total("webimage_downloaded_bytes_total"), decodes: total("webimage_decodes_total"),
                      transforms: total("webimage_transforms_total"), decodeTimes: timings("decode"), firstBytes: timings("first_byte"),
                      stores: timings("store"))
        var context = ImageContext()
        context.transformer = GrayscaleTransformer()
        _ = try await h.manager.image(for: h.url("/a.png"), options: .waitStoreCache, context: context)   // network
        _ = try await h.manager.image(for: h.url("/a.png"), context: context)                           // memory
        await h.cache.clearMemory()
        _ = try await h.manager.image(for: h.url("/a.png"), context: context)                           // disk
        await #expect(throws: ImageError.self) { try await h.manager.image(for: h.url("/missing.png")) }
        #expect(total(loads, [("source", "network")]) - before.network == 1)
        #expect(total(loads, [("source", "memory")]) - before.memory == 1)
        #expect(total(loads, [("source", "disk")]) - before.disk == 1)
        #expect(total(loads, [("source", "error"), ("error", "bad_status")]) - before.failed == 1)
        #expect(total("webimage_downloaded_bytes_total") - before.bytes == Int64(ManagerHarness.png.count))
        #expect(total("webimage_decodes_total") - before.decodes == 1 && total("webimage_transforms_total") - before.transforms == 1)
        #expect(timings("decode") - before.decodeTimes == 1 && timings("first_byte") - before.firstBytes == 1)
        #expect(timings("store") - before.stores >= 1)
        let cost = try Self.backend.expectGauge("webimage_memory_cache_cost_bytes", [("cache", "test")]).lastValue
        #expect(cost == Double(h.cache.memoryCache!.totalCost))
        await h.finish()
    }

    /// A data call and an image call of one URL share one transfer, and each is its own load in
    /// the figures: two loads from the network, the bytes downloaded once, and each disk write
    /// timed (the data load's through the image stages' own write).
    @Test func aDataCallAndAnImageCallOfOneURLAreEachCounted() async throws {
        _ = Self.backend
        let h = try await ManagerHarness()
        let body = ManagerHarness.png
        h.server.route("/slow.png", .drip(body: body, chunk: max(1, body.count / 4), interval: .milliseconds(100)))
        let url = h.url("/slow.png")
        let loads = "webimage_loads_total"
        let before = (network: total(loads, [("source", "network")]), bytes: total("webimage_downloaded_bytes_total"),
                      stores: timings("store"))
        async let image = h.manager.image(for: url, options: .waitStoreCache)
        async let data = h.manager.data(for: url, options: .waitStoreCache)
        let (width, bytes) = try await (image.width, data)
        #expect(width == 64 && bytes == body)
        #expect(h.server.requestCount("/slow.png") == 1, "one transfer for both")
        #expect(total(loads, [("source", "network")]) - before.network == 2)
        #expect(total("webimage_downloaded_bytes_total") - before.bytes == Int64(body.count))
        #expect(timings("store") - before.stores == 2)
        await h.finish()
    }

    /// A call's deadline (`loadTimeout`) counts as timed out, once; a caller's cancellation as
    /// cancelled, once; a failure inside the deadline as itself, once.
    @Test func aDeadlineIsTimedOutNotCancelled() async throws {
        _ = Self.backend
        let h = try await ManagerHarness()
        h.server.route("/slow.png", .delayed(.seconds(5), .respond(body: ManagerHarness.png)))
        h.server.route("/missing.png", .respond(status: 404, body: Data()))
        let loads = "webimage_loads_total"
        func errors(_ kind: String) -> Int64 { total(loads, [("source", "error"), ("error", kind)]) }
        let before = (timedOut: errors("timed_out"), cancelled: errors("cancelled"), badStatus: errors("bad_status"))
        let events = h.manager.lifecycleEvents()
        var context = ImageContext()
        context.loadTimeout = .milliseconds(100)
        await #expect(throws: ImageError.timedOut(url: h.url("/slow.png"))) {
            try await h.manager.image(for: h.url("/slow.png"), context: context)
        }
        await #expect(throws: ImageError.self) { try await h.manager.image(for: h.url("/missing.png"), context: context) }
        let cancelled = Task { try await h.manager.image(for: h.url("/slow.png?2"), context: context) }
        try await Task.sleep(for: .milliseconds(30))
        cancelled.cancel()
        _ = try? await cancelled.value
        #expect(errors("timed_out") - before.timedOut == 1)
        #expect(errors("bad_status") - before.badStatus == 1)
        #expect(errors("cancelled") - before.cancelled == 1)
        var failures: [String] = []
        for await event in events {
            if case .loadFailed(let url, let error) = event { failures.append("\(url.lastPathComponent) \(LoadMetrics.kind(of: error))") }
            if failures.count == 3 { break }
        }
        #expect(failures == ["slow.png timed_out", "missing.png bad_status", "slow.png cancelled"])
        await h.finish()
    }

    @Test func errorKindsAreFewAndNamed() {
        let url = URL(string: "http://a/b.png")!
        #expect(LoadMetrics.kind(of: CancellationError()) == "cancelled")
        #expect(LoadMetrics.kind(of: ImageError.timedOut(url: url)) == "timed_out")
        #expect(LoadMetrics.kind(of: ImageError.badStatusCode(500, url: url)) == "bad_status")
        #expect(LoadMetrics.kind(of: ImageError.decodingFailed(.emptyData, source: "a", byteCount: 0)) == "decoding")
        #expect(LoadMetrics.kind(of: ImageError.blacklistedURL(url)) == "invalid_url")
        #expect(Set(LoadMetrics.errorKinds).count == LoadMetrics.errorKinds.count)
    }
}

extension LoadMetricsTests {
    /// `data(for:)` is counted as the image calls are: by source, and its failures by kind.
    @Test func dataLoadsAreCountedBySource() async throws {
        _ = Self.backend
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        h.server.route("/missing.png", .respond(status: 404, body: Data()))
        let loads = "webimage_loads_total"
        let before = (network: total(loads, [("source", "network")]), disk: total(loads, [("source", "disk")]),
                      failed: total(loads, [("source", "error"), ("error", "bad_status")]))
        _ = try await h.manager.data(for: h.url("/a.png"), options: .waitStoreCache)   // network
        _ = try await h.manager.data(for: h.url("/a.png"))                              // disk
        await #expect(throws: ImageError.self) { try await h.manager.data(for: h.url("/missing.png")) }
        #expect(total(loads, [("source", "network")]) - before.network == 1)
        #expect(total(loads, [("source", "disk")]) - before.disk == 1)
        #expect(total(loads, [("source", "error"), ("error", "bad_status")]) - before.failed == 1)
        await h.finish()
    }
}

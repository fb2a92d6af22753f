import Foundation
import Testing
@testable import WebImage

/// `Configuration.maximumConcurrentLoads`: loads past the memory cache beyond the limit wait
/// without a task (no disk query, no transfer), callers of a waiting key join it, a cancelled
/// caller takes its load out, and the most urgent load starts first.
@Suite(.serialized) struct AdmissionTests {
    func harness(limit: Int) async throws -> ManagerHarness {
        var configuration = ImageManager.Configuration()
        configuration.maximumConcurrentLoads = limit
        let h = try await ManagerHarness(configuration: configuration)
        h.server.route("/block", .delayed(.milliseconds(500), .respond(body: ManagerHarness.png)))
        for index in 0..<10 { h.server.route("/slow\(index)", .delayed(.milliseconds(300), .respond(body: ManagerHarness.png))) }
        for path in ["/a", "/b", "/c"] { h.server.route(path, .respond(body: ManagerHarness.png)) }
        return h
    }

    @Test func onlyTheLimitRunsTheOthersHoldNoTransfer() async throws {
        let h = try await harness(limit: 2)
        let tasks = (0..<10).map { index in Task { try await h.manager.image(for: h.url("/slow\(index)")) } }
        try await waitUntil(h.manager.pipeline.admission.counts == (2, 8))
        try await Task.sleep(for: .milliseconds(100))
        #expect(h.loader.liveTransferCount == 2, "6 downloads are allowed, 2 loads are admitted")
        #expect(await h.manager.inFlightCounts().loads == 10, "the waiting loads exist and can be joined")
        for task in tasks { _ = try await task.value }
        #expect((0..<10).allSatisfy { h.server.requestCount("/slow\($0)") == 1 })
        // A work gives its slot back after it resumed its callers.
        try await waitUntil(h.manager.pipeline.admission.counts == (0, 0))
        await h.finish()
    }

    @Test func callersOfAWaitingLoadJoinIt() async throws {
        let h = try await harness(limit: 1)
        let blocker = Task { try await h.manager.image(for: h.url("/block")) }
        try await waitUntil(h.server.requestCount("/block") == 1)
        let callers = (0..<3).map { _ in Task { try await h.manager.image(for: h.url("/a")) } }
        try await waitUntil(h.manager.pipeline.admission.counts == (1, 1))
        #expect(await h.manager.inFlightCounts().loads == 2)
        _ = try await blocker.value
        for caller in callers { _ = try await caller.value }
        #expect(h.server.requestCount("/a") == 1)
        await h.finish()
    }

    @Test func aCancelledWaitingCallTakesItsLoadOut() async throws {
        let h = try await harness(limit: 1)
        let blocker = Task { try await h.manager.image(for: h.url("/block")) }
        try await waitUntil(h.server.requestCount("/block") == 1)
        let waiting = Task { try await h.manager.image(for: h.url("/a")) }
        try await waitUntil(h.manager.pipeline.admission.counts == (1, 1))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(h.manager.pipeline.admission.counts == (1, 0), "withdrawn at once")
        #expect(await h.manager.inFlightCounts().loads == 1)
        _ = try await blocker.value
        try await Task.sleep(for: .milliseconds(50))
        #expect(h.server.requestCount("/a") == 0, "a withdrawn load never runs")
        try await waitUntil(h.manager.pipeline.admission.counts == (0, 0))
        await h.finish()
    }

    @Test func theMostUrgentWaitingLoadStartsFirst() async throws {
        let h = try await harness(limit: 1)
        let handle = LoadPriority(.low)
        var context = ImageContext()
        context.priority = handle
        let blocker = Task { try await h.manager.image(for: h.url("/block")) }
        try await waitUntil(h.server.requestCount("/block") == 1)
        let a = Task { try await h.manager.image(for: h.url("/a"), context: context) }
        try await waitUntil(h.manager.pipeline.admission.counts.waiting == 1)
        let b = Task { try await h.manager.image(for: h.url("/b")) }
        try await waitUntil(h.manager.pipeline.admission.counts.waiting == 2)
        let c = Task { try await h.manager.image(for: h.url("/c"), options: .highPriority) }
        try await waitUntil(h.manager.pipeline.admission.counts.waiting == 3)
        handle.value = .high   // /a rises to /c's level, in its place by arrival: before /c, and before /b
        for task in [blocker, a, b, c] { _ = try await task.value }
        #expect(h.server.requestOrder == ["/block", "/a", "/c", "/b"])
        await h.finish()
    }
}

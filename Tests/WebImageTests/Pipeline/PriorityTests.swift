import Foundation
import Testing
@testable import WebImage

/// Priority that rises and falls: a queued transfer follows the most urgent caller of its load
/// (Nuke's `lowPriorityRequestEscalatesWhenHigherPriorityJoins`), and a caller can change its
/// own priority through a `LoadPriority` handle. One transfer at a time, behind a slow one, so
/// that the order the server sees is the order of the loader's queue.
@Suite(.serialized) struct PriorityTests {
    /// A harness whose loader runs one transfer at a time, with `/block` holding the slot for a while.
    func harness() async throws -> ManagerHarness {
        var configuration = HTTPImageLoader.Configuration()
        configuration.maximumConcurrentDownloads = 1
        let h = try await ManagerHarness(loaderConfiguration: configuration)
        h.server.route("/block", .delayed(.milliseconds(600), .respond(body: ManagerHarness.png)))
        for path in ["/a", "/b"] { h.server.route(path, .respond(body: ManagerHarness.png)) }
        return h
    }

    /// Starts the blocker, then `/a` with `aOptions`/`aContext` and `/b` at normal priority, and
    /// waits until both wait in the loader's queue.
    func queue(_ h: ManagerHarness, aOptions: ImageOptions = .lowPriority, aContext: ImageContext = .init())
        async throws -> [Task<Image, any Error>] {
        let blocker = Task { try await h.manager.image(for: h.url("/block")) }
        while h.server.requestCount("/block") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let a = Task { try await h.manager.image(for: h.url("/a"), options: aOptions, context: aContext) }
        while h.loader.liveTransferCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        let b = Task { try await h.manager.image(for: h.url("/b")) }
        while h.loader.liveTransferCount < 3 { try await Task.sleep(for: .milliseconds(5)) }
        return [blocker, a, b]
    }

    @Test func aLowPriorityLoadRisesWhenAHighPriorityCallerJoins() async throws {
        let h = try await harness()
        let tasks = try await queue(h)
        // A high-priority caller of /a joins the queued low-priority load: /a now goes before /b.
        let urgent = Task { try await h.manager.image(for: h.url("/a"), options: .highPriority) }
        for task in tasks { _ = try await task.value }
        _ = try await urgent.value
        #expect(h.server.requestOrder == ["/block", "/a", "/b"])
        #expect(h.server.requestCount("/a") == 1, "the joining caller shared the transfer")
        await h.finish()
    }

    @Test func itFallsBackWhenTheHighPriorityCallerLeaves() async throws {
        let h = try await harness()
        let tasks = try await queue(h)
        let urgent = Task { try await h.manager.image(for: h.url("/a"), options: .highPriority) }
        try await Task.sleep(for: .milliseconds(50))
        urgent.cancel()
        await #expect(throws: CancellationError.self) { try await urgent.value }
        for task in tasks { _ = try await task.value }
        #expect(h.server.requestOrder == ["/block", "/b", "/a"], "the low-priority load kept its raised place")
        await h.finish()
    }

    @Test func aCallerMovesItsLoadWithAPriorityHandle() async throws {
        let h = try await harness()
        let handle = LoadPriority(.low)
        var context = ImageContext()
        context.priority = handle
        let tasks = try await queue(h, aOptions: [], aContext: context)
        handle.value = .high
        for task in tasks { _ = try await task.value }
        #expect(h.server.requestOrder == ["/block", "/a", "/b"])
        await h.finish()
    }

    @Test func withoutAChangeTheQueueKeepsItsOrder() async throws {
        let h = try await harness()
        let tasks = try await queue(h)
        for task in tasks { _ = try await task.value }
        #expect(h.server.requestOrder == ["/block", "/b", "/a"], "normal before low")
        await h.finish()
    }

    /// The handle keeps its observers; none of them keeps the handle (or the work) alive.
    @Test func aPriorityHandleIsFreedAfterItsLoad() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        weak var weakHandle: LoadPriority?
        do {
            let handle = LoadPriority(.low)
            weakHandle = handle
            var context = ImageContext()
            context.priority = handle
            _ = try await h.manager.image(for: h.url("/a.png"), options: .fromLoaderOnly, context: context)
            handle.value = .high   // after the load: nothing left to move
        }
        await h.manager.waitForPendingStores()
        // The caller returns before its work and its transfer have quite ended (the image is
        // delivered before the memory store; the loader's thread lets go of the transfer after
        // resuming it): a leak is a handle still alive once they have, not a moment after.
        for _ in 0..<200 where weakHandle != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakHandle == nil, "the handle outlived its load")
        await h.finish()
    }
}

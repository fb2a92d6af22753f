import Foundation
import Synchronization
import Testing
@testable import WebImage

/// A plain call (no options, no context of its own) joins a plain call's work in flight by its
/// URL, without building its own request: one work and one transfer, never a work that ended,
/// never a work made by a call with options, and the failed-URL list still applies.
@Suite struct PlainJoinTests {
    /// A harness whose /a.png answers after 300 ms, its manager and that URL.
    private func slowHarness() async throws -> (ManagerHarness, ImageManager, URL) {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .delayed(.milliseconds(300), .respond(body: ManagerHarness.png)))
        return (h, h.manager, h.url("/a.png"))
    }

    private func joinPlain(_ manager: ImageManager, _ url: URL) -> (work: SharedWork<ImageEvent, SharedResult>, id: Int, key: WorkKey)? {
        manager.pipeline.works.joinIfRunning(WorkKey(plainURL: url.absoluteString), priority: { $0.request.callerPriority }, onEvent: nil)
    }

    private func hasPlainWork(_ manager: ImageManager, _ url: URL) -> Bool {
        manager.pipeline.works.contains(WorkKey(plainURL: url.absoluteString))
    }

    @Test func plainCallsShareOneWorkByTheURLAndAnEndedWorkIsNeverJoined() async throws {
        let (h, manager, url) = try await slowHarness()
        let calls = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await manager.image(for: url).width } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        try await waitUntil(h.server.requestCount("/a.png") == 1)
        let (work, id, key) = try #require(joinPlain(manager, url), "the plain work in flight is found by its URL")
        #expect(key.request.isPlain && key.request.urlString == url.absoluteString)
        #expect(try await work.wait(id).result.image.width == 64)
        #expect(try await calls.value == Array(repeating: 64, count: 20))
        #expect(h.server.requestCount("/a.png") == 1)

        // Once the work has ended, its URL leads nowhere: the next plain call makes a new work
        // (a stale entry would hand it the old image).
        await manager.waitForPendingStores()
        try await waitUntil(manager.pipeline.works.count == 0)
        #expect(!hasPlainWork(manager, url))
        await h.cache.clear(.all)
        let small = try Image(bitmap: Fixtures.gradient(width: 32, height: 32)).encoded(as: .png)
        h.server.route("/a.png", .respond(body: small))
        #expect(try await manager.image(for: url).width == 32)
        #expect(h.server.requestCount("/a.png") == 2)
        await h.finish()
    }

    @Test func aWorkMadeByACallWithOptionsIsJoinedByItsKeyNotByItsURL() async throws {
        let (h, manager, url) = try await slowHarness()
        // .lowPriority does not change the work (it is not part of the key), but the call is not plain.
        let first = Task { try await manager.image(for: url, options: .lowPriority).width }
        try await waitUntil(h.server.requestCount("/a.png") == 1)
        #expect(!hasPlainWork(manager, url), "only a plain call's work is found by its URL")
        // A plain call still shares that work, through its key.
        #expect(try await manager.image(for: url).width == 64)
        #expect(try await first.value == 64)
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    @Test func aFailedURLFailsAPlainCallEvenWithItsWorkInFlight() async throws {
        let (h, manager, url) = try await slowHarness()
        let first = Task { try await manager.image(for: url).width }
        try await waitUntil(h.server.requestCount("/a.png") == 1)
        #expect(hasPlainWork(manager, url))
        manager.failedURLs.insert(url)
        await #expect(throws: ImageError.blacklistedURL(url)) { try await manager.image(for: url) }
        #expect(try await first.value == 64, "the call already waiting is not affected")
        await h.finish()
    }
    // MARK: The one decision (`ImageManager.decide`): a plain call joins before building anything

    /// The subscription the decision took (joined, with the work in flight), to be waited on.
    private func shortcutJoin(_ manager: ImageManager, _ url: URL) -> (SharedWork<ImageEvent, SharedResult>, Int)? {
        if case .subscribed(let work, let id, _)? = try? manager.decide(url, options: [], context: .init(), onEvent: { nil }, runsHooks: true) { return (work, id) }
        return nil
    }

    /// Joined calls through the shortcut get the shared image and are counted as calls: one
    /// `loadFinished` each, as every call on the whole path.
    @Test func plainCallsJoinThroughTheShortcutAndAreEachCounted() async throws {
        let (h, manager, url) = try await slowHarness()
        let events = manager.lifecycleEvents()
        let finished = Mutex(0)
        let watcher = Task {
            for await event in events {
                if case .loadFinished = event { finished.withLock { $0 += 1 } }
            }
        }
        defer { watcher.cancel() }
        let first = Task { try await manager.image(for: url).width }
        try await waitUntil(h.server.requestCount("/a.png") == 1)
        let (work, id) = try #require(shortcutJoin(manager, url), "the shortcut joins the plain work in flight")
        let joined = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try await manager.image(for: url).width } }
            group.addTask { try await manager.result(for: url).image.width }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(joined == Array(repeating: 64, count: 5))
        #expect(try await first.value == 64)
        #expect(try await work.wait(id).result.image.width == 64, "the subscription taken by hand is served too")
        #expect(h.server.requestCount("/a.png") == 1)
        try await waitUntil(finished.withLock { $0 } == 6)
        try await Task.sleep(for: .milliseconds(50))
        #expect(finished.withLock { $0 } == 6, "one loadFinished per call (the first and five joined)")
        await h.finish()
    }

    /// A joined caller whose task is cancelled leaves with `CancellationError`; the work goes on
    /// for the caller that made it.
    @Test func aCancelledJoinerLeavesAndTheWorkGoesOn() async throws {
        let (h, manager, url) = try await slowHarness()
        let first = Task { try await manager.image(for: url).width }
        try await waitUntil(h.server.requestCount("/a.png") == 1)
        let joiner = Task { try await manager.image(for: url).width }
        try await Task.sleep(for: .milliseconds(50))
        joiner.cancel()
        await #expect(throws: CancellationError.self) { try await joiner.value }
        #expect(try await first.value == 64)
        #expect(!(await manager.isFailedURL(url)), "a cancellation is not a permanent failure")
        await h.finish()
    }

    /// A manager with a default time limit keeps it for joining callers: every call waits in
    /// the one wait, which bounds it.
    @Test func aDefaultTimeLimitBoundsJoiningCallers() async throws {
        var configuration = ImageManager.Configuration()
        configuration.defaultContext.loadTimeout = .milliseconds(150)
        let h = try await ManagerHarness(configuration: configuration)
        h.server.route("/a.png", .delayed(.milliseconds(600), .respond(body: ManagerHarness.png)))
        let url = h.url("/a.png")
        let first = Task { try await h.manager.image(for: url).width }
        try await waitUntil(h.server.requestCount("/a.png") == 1)
        await #expect(throws: ImageError.timedOut(url: url)) { _ = try await h.manager.image(for: url) }
        await #expect(throws: ImageError.timedOut(url: url)) { _ = try await first.value }
        await h.finish()
    }
}

import Foundation
import Synchronization
import Testing
@testable import WebImage

/// `ImageTask`, checked as Nuke's own tests check its `ImageTask`: one caller of the shared work,
/// with a priority that moves a queued load, streams, a state, and a cancel that leaves the
/// other callers' load running.
@Suite(.serialized) struct ImageTaskTests {
    /// `PriorityTests`' harness: one transfer at a time, `/block` holding the slot a while.
    func queuedHarness() async throws -> ManagerHarness { try await PriorityTests().harness() }

    /// Nuke: `ImagePipelineTests+Priority` `updatedDataLoadingQueuePriority` (a task's new
    /// priority reaches its queued job). Here the order the server sees is the queue's order.
    @Test func aTasksPriorityChangeReordersItsQueuedLoad() async throws {
        let h = try await queuedHarness()
        let blocker = h.manager.imageTask(for: h.url("/block"))
        while h.server.requestCount("/block") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let a = h.manager.imageTask(for: h.url("/a"), options: .lowPriority)
        #expect(a.priority == .low)
        while h.loader.liveTransferCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        let b = h.manager.imageTask(for: h.url("/b"))
        while h.loader.liveTransferCount < 3 { try await Task.sleep(for: .milliseconds(5)) }
        a.priority = .high
        #expect(a.priority == .high)
        for task in [blocker, a, b] { _ = try await task.image }
        #expect(h.server.requestOrder == ["/block", "/a", "/b"])
        await h.finish()
    }

    /// Without the change, low waits behind normal: the reordering above is the setter's.
    @Test func withoutAChangeTheLowPriorityTaskWaits() async throws {
        let h = try await queuedHarness()
        let blocker = h.manager.imageTask(for: h.url("/block"))
        while h.server.requestCount("/block") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let a = h.manager.imageTask(for: h.url("/a"), options: .lowPriority)
        while h.loader.liveTransferCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        let b = h.manager.imageTask(for: h.url("/b"))
        for task in [blocker, a, b] { _ = try await task.image }
        #expect(h.server.requestOrder == ["/block", "/b", "/a"])
        await h.finish()
    }

    /// Nuke: `ImagePipelineCoalescingTests` (two tasks of one request share one transfer;
    /// cancelling one does not cancel the other).
    @Test func twoTasksShareOneTransferAndOneCancelsWithoutTheOther() async throws {
        let h = try await ManagerHarness()
        h.server.route("/slow.png", .delayed(.milliseconds(300), .respond(body: ManagerHarness.png)))
        let first = h.manager.imageTask(for: h.url("/slow.png"))
        let second = h.manager.imageTask(for: h.url("/slow.png"))
        #expect(first != second && first.id != second.id && first == first)
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.image }
        #expect(first.state == .cancelled && first.isCancelled)
        let image = try await second.image
        #expect(image.width == 64 && second.state == .completed)
        #expect(h.server.requestCount("/slow.png") == 1, "one transfer for both tasks")
        await h.finish()
    }

    /// A memory hit is answered while the task is made: completed before it is returned.
    @Test func aMemoryHitMakesACompletedTask() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        _ = try await h.manager.image(for: h.url("/a.png"))
        let task = h.manager.imageTask(for: h.url("/a.png"))
        #expect(task.state == .completed)
        #expect(try await task.result.cacheType == .memory)
        await h.finish()
    }

    /// Any number of callers await one task; the transfer runs once.
    @Test func manyCallersAwaitOneTask() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .delayed(.milliseconds(100), .respond(body: ManagerHarness.png)))
        let task = h.manager.imageTask(for: h.url("/a.png"))
        let widths = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await task.image.width } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(widths == Array(repeating: 64, count: 8))
        #expect(try await task.result.cacheType == .none)
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    /// Dropping every reference to a task does not stop its load: the image lands in the cache.
    @Test func droppingTheTaskDoesNotCancelItsLoad() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .delayed(.milliseconds(100), .respond(body: ManagerHarness.png)))
        weak var weakTask: LiveImageTask?
        do {
            let task = h.manager.imageTask(for: h.url("/a.png"))
            guard case .live(let live) = task.kind else { Issue.record("a miss makes a live task"); return }
            weakTask = live
        }
        try await waitUntil(h.manager.cachedImage(for: h.url("/a.png")) != nil)
        #expect(h.server.requestCount("/a.png") == 1)
        try await waitUntil(weakTask == nil)
        await h.finish()
    }

    /// An awaiting caller that is cancelled leaves; when it was the last one, the task is
    /// cancelled and its load stops (a cancelled Swift task stops its load).
    @Test func theLastAwaitingCallersCancellationCancelsTheTask() async throws {
        let h = try await ManagerHarness()
        h.server.route("/slow.png", .delayed(.seconds(5), .respond(body: ManagerHarness.png)))
        let task = h.manager.imageTask(for: h.url("/slow.png"))
        let staying = Task { try await task.image }
        let leaving = Task { try await task.image }
        try await Task.sleep(for: .milliseconds(50))
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.value }
        #expect(task.state == .running, "another caller still awaits it")
        staying.cancel()
        await #expect(throws: CancellationError.self) { try await staying.value }
        try await waitUntil(task.state == .cancelled)
        for _ in 0..<400 where await h.manager.inFlightCounts().loads > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(await h.manager.inFlightCounts().loads == 0, "its load stopped")
        #expect(h.server.requestCount("/slow.png") == 1)
        await h.finish()
    }

    /// Nuke: `ImagePipelineAsyncAwaitTests` `progressUpdated` (the task's progress stream sees the
    /// bytes; `currentProgress` holds the last).
    @Test func progressStreamAndCurrentProgress() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.jpeg
        h.server.route("/drip.jpg", .drip(body: body, chunk: body.count / 4 + 1, interval: .milliseconds(30)))
        let task = h.manager.imageTask(for: h.url("/drip.jpg"))
        var received: [Int64] = []
        for await progress in task.progress { received.append(progress.receivedBytes) }
        #expect(received.last == Int64(body.count))
        #expect(received == received.sorted())
        #expect(task.currentProgress?.receivedBytes == Int64(body.count))
        #expect(task.state == .completed)
        await h.finish()
    }

    /// The events stream ends with `.finished`; previews come with `.progressiveLoad`; a stream
    /// made after the end gives `.finished` at once.
    @Test func eventsAndPreviews() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.progressiveJPEG
        h.server.route("/p.jpg", .drip(body: body, chunk: body.count / 6 + 1, interval: .milliseconds(40)))
        let task = h.manager.imageTask(for: h.url("/p.jpg"), options: .progressiveLoad)
        let previews = task.previews
        var sawFinished = false
        for try await event in task.events {
            if case .finished(let result) = event { sawFinished = result.image.width == 512 }
        }
        var previewCount = 0
        for await _ in previews { previewCount += 1 }
        #expect(sawFinished)
        #expect(previewCount > 0)
        var late: [ImageEvent] = []
        for try await event in task.events { late.append(event) }
        #expect(late.count == 1)
        if case .finished? = late.first {} else { Issue.record("a late stream gets .finished") }
        await h.manager.waitForPendingStores()
        await h.finish()
    }

    /// A call that fails its checks makes a failed task; its streams throw the error.
    @Test func anInvalidURLMakesAFailedTask() async throws {
        let h = try await ManagerHarness()
        let task = h.manager.imageTask(for: URL(string: "no-scheme")!)
        #expect(task.state == .failed)
        await #expect(throws: ImageError.self) { try await task.image }
        await #expect(throws: ImageError.self) { for try await _ in task.events {} }
        await h.finish()
    }

    /// A task of a 404 fails; cancelling it afterwards changes nothing.
    @Test func aFailedLoadFailsTheTask() async throws {
        let h = try await ManagerHarness()
        h.server.route("/missing.png", .respond(status: 404, body: Data()))
        let task = h.manager.imageTask(for: h.url("/missing.png"))
        await #expect(throws: ImageError.self) { try await task.image }
        task.cancel()
        #expect(task.state == .failed)
        await h.finish()
    }
}

import Foundation
import Testing
@testable import WebImage

/// `ImageManager.lifecycleEvents()`: every load of the manager, for whoever watches.
@Suite(.serialized) struct LifecycleEventsTests {
    /// A short description of an event, for comparing sequences.
    static func describe(_ event: LoadLifecycleEvent) -> String {
        switch event {
        case .loadStarted(let url): "load \(url.lastPathComponent)"
        case .downloadStarted(let url): "download \(url.lastPathComponent)"
        case .downloadFinished(let url, let bytes, let metrics): "downloaded \(url.lastPathComponent) \(bytes) \(metrics != nil)"
        case .downloadFailed(let url, _): "download failed \(url.lastPathComponent)"
        case .loadFinished(let url, let source): "finished \(url.lastPathComponent) \(source)"
        case .loadFailed(let url, let error): "failed \(url.lastPathComponent) \(error is ImageError)"
        }
    }

    static func take(_ count: Int, from stream: AsyncStream<LoadLifecycleEvent>) async -> [String] {
        var taken: [String] = []
        for await event in stream {
            taken.append(describe(event))
            if taken.count == count { break }
        }
        return taken
    }

    @Test func aWatcherSeesEveryStepOfEveryLoad() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        h.server.route("/gone.png", .respond(status: 404, body: Data()))
        let first = h.manager.lifecycleEvents()
        let second = h.manager.lifecycleEvents()
        _ = try await h.manager.image(for: h.url("/a.png"))
        _ = try await h.manager.image(for: h.url("/a.png"))
        await #expect(throws: ImageError.self) { try await h.manager.image(for: h.url("/gone.png")) }
        let expected = ["load a.png", "download a.png", "downloaded a.png \(ManagerHarness.png.count) true", "finished a.png none",
                        "finished a.png memory",
                        "load gone.png", "download gone.png", "download failed gone.png", "failed gone.png true"]
        #expect(await Self.take(expected.count, from: first) == expected)
        #expect(await Self.take(expected.count, from: second) == expected, "each stream gets every event")
        await h.finish()
    }

    @Test func aDroppedStreamUnsubscribesAndNoneCostsNothing() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        #expect(!h.manager.pipeline.events.isWatched)
        do {
            let stream = h.manager.lifecycleEvents()
            #expect(h.manager.pipeline.events.isWatched)
            _ = stream
        }
        #expect(!h.manager.pipeline.events.isWatched, "the dropped stream left")
        let watcher = Task { await Self.take(100, from: h.manager.lifecycleEvents()) }
        for _ in 0..<200 where !h.manager.pipeline.events.isWatched { try await Task.sleep(for: .milliseconds(5)) }
        watcher.cancel()
        _ = await watcher.value
        #expect(!h.manager.pipeline.events.isWatched, "cancelling the reader unsubscribes it")
        _ = try await h.manager.image(for: h.url("/a.png"))
        await h.finish()
    }
}

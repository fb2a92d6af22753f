import Foundation
import Testing
@testable import WebImage

/// `ImageContext.alternativeSources` (Kingfisher's `alternativeSources`): tried in order after
/// the asked URL fails, cached under the asked URL's key, and named in the result.
@Suite(.serialized) struct AlternativeSourcesTests {
    func context(_ sources: [URL]) -> ImageContext {
        var context = ImageContext()
        context.alternativeSources = sources
        return context
    }

    @Test func theFirstSourceThatWorksServesAndTheImageIsCachedUnderTheAskedKey() async throws {
        let h = try await ManagerHarness()
        h.server.route("/main.png", .respond(status: 404, body: Data()))
        h.server.route("/broken.png", .respond(body: ManagerHarness.png.prefix(40)))
        h.server.route("/mirror.png", .respond(body: ManagerHarness.png))
        h.server.route("/unused.png", .respond(body: ManagerHarness.png))
        let main = h.url("/main.png")
        let sources = [h.url("/broken.png"), h.url("/mirror.png"), h.url("/unused.png")]
        let result = try await h.manager.result(for: main, options: .waitStoreCache, context: context(sources))
        #expect(result.url == main && result.sourceURL == h.url("/mirror.png") && result.cacheType == .none)
        #expect(result.image.bitmap.width == 64)
        #expect(["/main.png", "/broken.png", "/mirror.png"].allSatisfy { h.server.requestCount($0) == 1 })
        #expect(h.server.requestCount("/unused.png") == 0, "tried in order, stopped at the first that worked")
        #expect(await h.cache.containsImage(forKey: main.absoluteString, in: .all) == .all, "cached under the asked URL's key")
        #expect(await h.cache.containsImage(forKey: h.url("/mirror.png").absoluteString, in: .all) == .none)
        // The next call is a memory hit: no source is asked again.
        let again = try await h.manager.result(for: main, context: context(sources))
        #expect(again.cacheType == .memory && again.sourceURL == main)
        #expect(h.server.requestCount("/main.png") == 1)
        #expect(await !h.manager.isFailedURL(main), "a load that succeeded blacklists nothing")
        await h.finish()
    }

    @Test func aWorkingURLNeverTouchesItsAlternatives() async throws {
        let h = try await ManagerHarness()
        h.server.route("/ok.png", .respond(body: ManagerHarness.png))
        h.server.route("/mirror.png", .respond(body: ManagerHarness.png))
        let result = try await h.manager.result(for: h.url("/ok.png"), context: context([h.url("/mirror.png")]))
        #expect(result.sourceURL == h.url("/ok.png"))
        #expect(h.server.requestCount("/mirror.png") == 0)
        await h.finish()
    }

    @Test func whenEverySourceFailsTheAskedURLsErrorIsThrown() async throws {
        let h = try await ManagerHarness()
        h.server.route("/main.png", .respond(status: 503, body: Data()))
        h.server.route("/a.png", .respond(status: 404, body: Data()))
        let main = h.url("/main.png")
        await #expect(throws: ImageError.badStatusCode(503, url: main)) {
            try await h.manager.image(for: main, context: context([h.url("/a.png"), URL(string: "gopher://nowhere/x.png")!]))
        }
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    @Test func aCancelledCallTriesNoAlternative() async throws {
        let h = try await ManagerHarness()
        h.server.route("/stall.png", .stallAfter(bytes: 10, body: ManagerHarness.png))
        h.server.route("/mirror.png", .respond(body: ManagerHarness.png))
        let manager = h.manager, url = h.url("/stall.png"), context = context([h.url("/mirror.png")])
        let task = Task { try await manager.image(for: url, context: context) }
        for _ in 0..<200 where h.server.requestCount("/stall.png") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        try await Task.sleep(for: .milliseconds(100))
        #expect(h.server.requestCount("/mirror.png") == 0)
        await h.finish()
    }
}

import Foundation
import Testing
@testable import WebImage

/// A context keeps what a manager worked out from it (`ImageContext.settings(for:make:)`), so
/// that the same context passed again is merged once: a context changed since, a copy changed
/// apart, or the same context given to another manager is always read again, and the context
/// keeps neither the manager nor itself alive.
@Suite(.serialized) struct ContextSettingsTests {
    @Test func aContextPassedAgainIsReadAgainOnceItChanged() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))
        let url = h.url("/a.jpg")
        var context = ImageContext()
        context.thumbnailPixelSize = PixelSize(width: 100, height: 100)
        let first = try await h.manager.image(for: url, context: context)
        #expect(max(first.width, first.height) <= 100)
        #expect(try await h.manager.image(for: url, context: context).width == first.width, "the same context again")

        // Changed after the manager kept it: the change is a new identity.
        context.thumbnailPixelSize = PixelSize(width: 50, height: 50)
        let second = try await h.manager.image(for: url, context: context)
        #expect(max(second.width, second.height) <= 50)

        // A copy changed apart leaves the original as it was.
        var copy = context
        copy.thumbnailPixelSize = nil
        #expect(try await h.manager.image(for: url, context: copy).width == 640)
        let again = try await h.manager.image(for: url, context: context)
        #expect(max(again.width, again.height) <= 50)

        // The same context given to a manager with other defaults is merged over those.
        var configuration = ImageManager.Configuration()
        configuration.defaultContext.thumbnailPixelSize = PixelSize(width: 20, height: 20)
        let other = ImageManager(cache: ImageCache(namespace: "other", directory: h.directory.url.appendingPathComponent("other"),
                                                   config: .init(cleanupInterval: nil)),
                                 loaders: ImageLoaders([h.loader]), configuration: configuration)
        var scaled = ImageContext()
        scaled.imageScaleFactor = 2
        #expect(try await h.manager.image(for: url, context: scaled).width == 640)
        let small = try await other.image(for: url, context: scaled)
        #expect(max(small.width, small.height) <= 20 && small.scale == 2, "\(small.width) at \(small.scale)")
        #expect(try await h.manager.image(for: url, context: scaled).width == 640, "and back on the first manager")
        await h.finish()
    }

    @Test func aContextKeepsNeitherTheManagerNorItsOwnValues() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        weak var weakManager: ImageManager?
        weak var weakHandle: LoadPriority?
        var context = ImageContext()
        do {
            let manager = ImageManager(cache: h.cache, loaders: ImageLoaders([h.loader]))
            weakManager = manager
            let handle = LoadPriority(.normal)
            weakHandle = handle
            context.priority = handle
            _ = try await manager.image(for: h.url("/a.png"), options: .fromLoaderOnly, context: context)
            await manager.waitForPendingStores()
        }
        for _ in 0..<200 where weakManager != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakManager == nil, "the context holds its manager weakly")
        context = ImageContext()
        for _ in 0..<200 where weakHandle != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakHandle == nil, "the settings the context kept do not hold the context")
        await h.finish()
    }
}

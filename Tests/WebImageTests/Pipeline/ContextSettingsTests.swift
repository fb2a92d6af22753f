import Foundation
import Testing
@testable import WebImage

/// A manager keeps what it worked out from each context (`ImageContext.settings(for:make:)`,
/// `ContextOwner`), so that the same context passed again is merged once: a context changed
/// since, a copy changed apart, or the same context given to another manager is always read
/// again, and the context keeps neither the manager, nor its cache, nor itself alive.
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

    /// What a context kept for a manager goes with the manager: a context that outlives its
    /// manager (a static one, passed to managers made per tenant) does not keep that manager's
    /// cache, with the images in its memory, alive.
    @Test func aContextDoesNotKeepTheCacheOfAManagerThatIsGone() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        weak var weakCache: ImageCache?
        var context = ImageContext()
        context.imageScaleFactor = 2
        do {
            let cache = ImageCache(namespace: "gone", directory: h.directory.url.appendingPathComponent("gone"),
                                   config: .init(cleanupInterval: nil))
            weakCache = cache
            let manager = ImageManager(cache: cache, loaders: ImageLoaders([h.loader]))
            _ = try await manager.image(for: h.url("/a.png"), context: context)
            await manager.waitForPendingStores()
        }
        for _ in 0..<200 where weakCache != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakCache == nil, "the context still holds the settings of a manager that is gone")
        #expect(context.imageScaleFactor == 2)
        await h.finish()
    }

    /// A manager keeps an entry per context its calls passed, until the context goes; a
    /// context changed in place is worked out again.
    @Test func aContextsEntryGoesWithIt() {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let settings = ImageManager(cache: ImageCache(namespace: "entries", directory: directory.url,
                                                      config: .init(cleanupInterval: nil))).defaultSettings
        let owner = ContextOwner()
        var kept = ImageContext()
        kept.imageScaleFactor = 2
        _ = kept.settings(for: owner) { _ in (settings, true) }
        do {
            var contexts = (0..<100).map { index -> ImageContext in
                var context = ImageContext()
                context.imageScaleFactor = Double(index + 3)
                return context
            }
            for context in contexts { _ = context.settings(for: owner) { _ in (settings, true) } }
            #expect(owner.entryCount == 101)
            contexts.removeAll()
        }
        #expect(owner.entryCount == 1)
        var made = false
        _ = kept.settings(for: owner) { _ in made = true; return (settings, true) }
        #expect(!made, "a live context's entry was dropped")
        kept.imageScaleFactor = 3
        _ = kept.settings(for: owner) { _ in made = true; return (settings, true) }
        #expect(made, "a context changed in place was found under its old values")
        #expect(owner.entryCount == 1)
    }
}

import Foundation
import Testing
@testable import WebImage

/// A manager works out what a call's context decides once for the same context passed again
/// (`ImageManager.lastContext`): a context changed since, a copy changed apart, or the same
/// context given to another manager is always read again.
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
        #expect(h.manager.lastContext.withLock { $0?.identity } === context.identity, "kept under the context's values")

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
}

import Foundation
import Synchronization
import Testing
@testable import WebImage
@testable import WebImageSVG

/// Previews kept in memory (Nuke's `isStoringPreviewsInMemoryCache`) and the decoder's format
/// hint (SDWebImage's `imageTypeIdentifierHint`).
@Suite(.serialized) struct PreviewsAndHintTests {
    static var keepingPreviews: ImageContext {
        var context = ImageContext()
        context.storesPreviewsInMemory = true
        return context
    }

    /// Nuke: `ImagePipelineProgressiveDecodingTests` `previewsAreStoredInMemoryCache...` (with
    /// the option, a preview lands in memory; the final image is what a later call gets).
    /// A load cancelled after its first preview leaves that preview under the preview key, not
    /// under the image's; the next progressive load starts with it; the finished load's image is
    /// the final one.
    @Test func aPreviewIsKeptUnderItsOwnKeyAndShownFirstByTheNextLoad() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.progressiveJPEG
        h.server.route("/p.jpg", .drip(body: body, chunk: body.count / 8 + 1, interval: .milliseconds(60)))
        let url = h.url("/p.jpg")
        let key = h.manager.cacheKey(for: url, context: Self.keepingPreviews)
        let first = h.manager.imageTask(for: url, options: .progressiveLoad, context: Self.keepingPreviews)
        for await _ in first.previews { break }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.image }
        #expect(h.cache.memory.image(forKey: key) == nil, "no preview where the final image goes")
        let kept = try #require(h.cache.memory.image(forKey: CacheKeys.previewKey(for: key)))
        #expect(kept.width == 512)

        // The next load's first event is the kept preview, before the first byte arrives.
        h.server.route("/p.jpg", .delayed(.milliseconds(300), .drip(body: body, chunk: body.count / 8 + 1, interval: .milliseconds(20))))
        var events: [ImageEvent] = []
        for try await event in h.manager.events(for: url, options: .progressiveLoad, context: Self.keepingPreviews) { events.append(event) }
        guard case .preview(let shown)? = events.first else { Issue.record("the kept preview comes first: \(events)"); return }
        #expect(shown.image.bitmap == kept.bitmap)
        guard case .finished(let result)? = events.last else { Issue.record("no final image"); return }
        let final = try Image(data: body)
        #expect(result.image.bitmap == final.bitmap)
        #expect(h.cache.memory.image(forKey: key)?.bitmap == final.bitmap, "memory holds the final image")
        await h.manager.waitForPendingStores()
        await h.finish()
    }

    /// Without the option nothing is kept: the same cancelled load leaves memory empty.
    @Test func withoutTheOptionNoPreviewIsKept() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.progressiveJPEG
        h.server.route("/p.jpg", .drip(body: body, chunk: body.count / 8 + 1, interval: .milliseconds(60)))
        let url = h.url("/p.jpg")
        let task = h.manager.imageTask(for: url, options: .progressiveLoad)
        for await _ in task.previews { break }
        task.cancel()
        _ = try? await task.image
        #expect(h.cache.memory.image(forKey: CacheKeys.previewKey(for: url.absoluteString)) == nil)
        await h.finish()
    }

    /// A preview never goes to memory while the final image is there: a progressive reload from
    /// the loader (the final image in memory) keeps none.
    @Test func noPreviewIsKeptBesideAFinalImage() async throws {
        let h = try await ManagerHarness()
        let body = ManagerHarness.progressiveJPEG
        h.server.route("/p.jpg", .drip(body: body, chunk: body.count / 8 + 1, interval: .milliseconds(40)))
        let url = h.url("/p.jpg")
        _ = try await h.manager.image(for: url, context: Self.keepingPreviews)
        let key = h.manager.cacheKey(for: url, context: Self.keepingPreviews)
        var previews = 0
        for try await event in h.manager.events(for: url, options: [.progressiveLoad, .refreshCached], context: Self.keepingPreviews) {
            if case .preview = event { previews += 1 }
        }
        #expect(previews > 0, "the reload made previews")
        #expect(h.cache.memory.image(forKey: CacheKeys.previewKey(for: key)) == nil)
        await h.manager.waitForPendingStores()
        await h.finish()
    }

    /// An SVG whose `<svg` comes after a prolog longer than sniffing reads: without a hint no
    /// coder takes it; with `formatHint = .svg` it renders, through the registry and through a
    /// manager's load.
    @Test func theFormatHintDecodesAnSVGSniffingMisses() async throws {
        let comment = "<!-- " + String(repeating: "a long licence header ", count: 20) + "-->\n"
        let svg = Data((comment + #"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="6"><rect width="8" height="6" fill="red"/></svg>"#).utf8)
        #expect(ImageFormat(sniffing: svg) == .unknown)
        let coders = ImageCoders([SVGCoder()] + ImageCoders.builtIn)
        let decode: (ImageContext) throws -> Image = { try coders.decode(svg, options: .init(), context: $0) }
        #expect(throws: ImageError.self) { try decode(.init()) }
        var context = ImageContext()
        context.formatHint = .svg
        let image = try decode(context)
        #expect(image.width == 8 && image.height == 6)
        // A hint the data does not fit is no help: PNG coders take no unknown bytes.
        var wrong = ImageContext()
        wrong.formatHint = .png
        #expect(throws: ImageError.self) { try decode(wrong) }

        let h = try await ManagerHarness()
        h.server.route("/logo", .respond(contentType: "image/svg+xml", body: svg))
        let manager = ImageManager(cache: h.cache, loaders: ImageLoaders([h.loader]), coders: coders)
        await #expect(throws: ImageError.self) { try await manager.image(for: h.url("/logo"), options: .fromLoaderOnly) }
        let loaded = try await manager.image(for: h.url("/logo"), options: [.fromLoaderOnly, .retryFailed], context: context)
        #expect(loaded.width == 8)
        await h.finish()
    }
}

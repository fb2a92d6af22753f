import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageJXL

/// `events(for:)` behaves the same for every format once its plug-in is registered: progress,
/// previews where the format has them (JPEG XL passes; AVIF and HEIC decode when whole), one
/// final image, and the same image again from the memory and disk caches.
@Suite(.serialized) struct PlugInEventsTests {
    @Test(arguments: ["jxl", "avif", "heic"])
    func aProgressiveLoadOfEachFormat(format: String) async throws {
        let server = TestHTTPServer()
        try await server.start()
        let directory = TemporaryDirectory("plug-in-events")
        defer { directory.remove() }
        let coders = ModernCorpus.coders
        let source = Image(bitmap: Fixtures.gradient(width: 512, height: 384, opaque: true))
        let body = try coders.encode(source, as: ImageFormat(rawValue: format)!, options: .init(quality: 0.9))
        server.route("/i", .drip(body: body, chunk: max(1, body.count / 8), interval: .milliseconds(25)))
        let cache = ImageCache(namespace: "test", directory: directory.url.appendingPathComponent("cache"),
                               config: .init(cleanupInterval: nil), coders: coders)
        let manager = ImageManager(cache: cache, loaders: ImageLoaders([HTTPImageLoader()]), coders: coders)
        var context = ImageContext()
        context.previewInterval = .zero
        var previews = 0, progress = 0
        var final: Image?
        for try await event in manager.events(for: server.url("/i"), options: .progressiveLoad, context: context) {
            switch event {
            case .progress: progress += 1
            case .preview(let partial): previews += 1; #expect(partial.image.width == 512)
            case .finished(let result): final = result.image
            case .cached: Issue.record("cached")
            }
        }
        let image = try #require(final)
        #expect(image.format.rawValue == format && image.width == 512 && image.height == 384)
        #expect(image.bitmap == (try coders.decode(body)).bitmap, "the final image is the whole file's")
        #expect(progress > 0)
        if format == "jxl" { #expect(previews >= 1, "JPEG XL shows its DC pass") } else { #expect(previews == 0) }
        // Again: from memory, then (a new manager on the same folder) from disk.
        let again = try await manager.result(for: server.url("/i"))
        #expect(again.cacheType == .memory && again.image.bitmap == image.bitmap)
        await manager.waitForPendingStores()
        let disk = ImageCache(namespace: "test", directory: directory.url.appendingPathComponent("cache"),
                              config: .init(cleanupInterval: nil), coders: coders)
        let fromDisk = try await ImageManager(cache: disk, loaders: ImageLoaders([HTTPImageLoader()]), coders: coders)
            .result(for: server.url("/i"))
        #expect(fromDisk.cacheType == .disk && fromDisk.image.bitmap == image.bitmap)
        #expect(server.requestCount("/i") == 1)
        await server.stop()
    }
}

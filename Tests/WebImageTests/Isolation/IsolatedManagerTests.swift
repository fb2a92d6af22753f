import Foundation
import Testing
import WebImage
import WebImageIsolation

/// A library user's manager with isolation on: downloaded bytes and disk hits are decoded in
/// workers, so files that abort or never end their decoder fail one call each and this process
/// (the test runner) lives on.
@Suite("Isolated decoding through the manager", .serialized, .timeLimit(.minutes(2)))
struct IsolatedManagerTests {
    @Test("A load of the aborting SVG fails typed; a PNG loads; the manager's process is untouched")
    func loads() async throws {
        let pool = try DecodingWorkerPoolTests.pool { $0.timeLimit = .seconds(2) }
        defer { pool.shutdown() }
        let directory = TemporaryDirectory("isolated-manager")
        defer { directory.remove() }
        let coders = ImageCoders(ImageCoders.builtIn, isolation: pool)
        let manager = ImageManager(cache: ImageCache(namespace: "isolated", directory: directory.url.appendingPathComponent("cache"), coders: coders),
                                   coders: coders)
        let abort = directory.url.appendingPathComponent("abort.svg"), endless = directory.url.appendingPathComponent("endless.svg")
        let photo = directory.url.appendingPathComponent("photo.png")
        try DecodingWorkerPoolTests.abortingSVG.write(to: abort)
        try DecodingWorkerPoolTests.endlessSVG.write(to: endless)
        try Image(bitmap: DecodingWorkerPoolTests.gradient(width: 120, height: 80)).encoded(as: .png).write(to: photo)

        let error = await #expect(throws: ImageError.self) { try await manager.image(for: abort) }
        guard case .undecodable(.svg, let reason)? = error?.decodeFailure else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("signal"))
        await #expect(throws: ImageError.decodeTimedOut(seconds: 2)) { try await manager.image(for: endless) }
        let image = try await manager.image(for: photo, context: { var c = ImageContext(); c.thumbnailPixelSize = PixelSize(width: 60, height: 60); return c }())
        #expect(image.width == 60 && image.height == 40)
        #expect(pool.restartCount == 2)
    }

    @Test("A disk hit is decoded in a worker: a planted entry that aborts its decoder is dropped, not fatal")
    func diskHit() async throws {
        let pool = try DecodingWorkerPoolTests.pool()
        defer { pool.shutdown() }
        let directory = TemporaryDirectory("isolated-disk")
        defer { directory.remove() }
        let coders = ImageCoders(ImageCoders.builtIn, isolation: pool)
        let cache = ImageCache(namespace: "isolated", directory: directory.url.appendingPathComponent("cache"), coders: coders)
        let manager = ImageManager(cache: cache, coders: coders)
        let url = URL(string: "https://images.example/planted.svg")!
        try await cache.store(nil, data: DecodingWorkerPoolTests.abortingSVG, extendedData: nil, forKey: manager.cacheKey(for: url),
                              to: .disk, context: ImageContext())
        await #expect(throws: ImageError.self) { try await manager.image(for: url, options: .fromCacheOnly) }
        #expect(pool.restartCount == 1)
        #expect(await cache.data(forKey: manager.cacheKey(for: url)) == nil, "the entry that does not decode is removed")
    }

    @Test("An isolated registry makes no incremental decoder: progressive loads give no previews")
    func noPreviews() throws {
        let pool = try DecodingWorkerPoolTests.pool()
        defer { pool.shutdown() }
        let png = try Image(bitmap: DecodingWorkerPoolTests.gradient(width: 8, height: 8)).encoded(as: .png)
        #expect(ImageCoders(ImageCoders.builtIn).makeIncrementalDecoder(for: png) != nil)
        #expect(ImageCoders(ImageCoders.builtIn, isolation: pool).makeIncrementalDecoder(for: png) == nil)
    }
}

import Foundation
import Synchronization
@testable import WebImage

/// A manager over a fresh server, loader and cache in a temporary directory, for one test.
final class ManagerHarness: Sendable {
    let server = TestHTTPServer()
    let loader: HTTPImageLoader
    let directory = TemporaryDirectory()
    let cache: ImageCache
    let manager: ImageManager

    static let png = try! Image(bitmap: Fixtures.gradient(width: 64, height: 48)).encoded(as: .png)
    static let jpeg = try! Image(bitmap: Fixtures.gradient(width: 640, height: 480, opaque: true)).encoded(as: .jpeg)
    static let progressiveJPEG = try! ImageCoders.shared.encode(Image(bitmap: Fixtures.gradient(width: 512, height: 384, opaque: true)),
                                                                as: .jpeg, options: .init(progressive: true))
    static let gif: Data = {
        let frames = (0..<3).map { i in ImageFrame(bitmap: Fixtures.gradient(width: 32, height: 32, opaque: i % 2 == 0), duration: 0.1) }
        return try! ImageCoders.shared.encode(Image(frames: frames, loopCount: 0, format: .gif), as: .gif)
    }()

    init(loaderConfiguration: HTTPImageLoader.Configuration = .init(), configuration: ImageManager.Configuration = .init(),
         cache: ImageCache? = nil) async throws {
        try await server.start()
        loader = HTTPImageLoader(configuration: loaderConfiguration)
        self.cache = cache ?? ImageCache(namespace: "test", directory: directory.url.appendingPathComponent("cache"),
                                         config: .init(cleanupInterval: nil))
        manager = ImageManager(cache: self.cache, loaders: ImageLoaders([loader, FileImageLoader(), DataImageLoader()]),
                               configuration: configuration)
    }

    func url(_ path: String) -> URL { server.url(path) }

    /// Waits for background stores and for transfers to end, then stops the server.
    func finish() async {
        for _ in 0..<200 where loader.liveTransferCount > 0 { try? await Task.sleep(for: .milliseconds(10)) }
        await server.stop()
        directory.remove()
    }
}

/// A loader that serves bodies from memory, records every request, and can hang.
final class RecordingLoader: ImageLoader {
    private let state = Mutex<(requests: [ImageLoaderRequest], running: Int, maxRunning: Int)>(([], 0, 0))
    let bodies: [String: Data]
    let delay: Duration
    let hangs: Bool

    init(bodies: [String: Data], delay: Duration = .zero, hangs: Bool = false) {
        self.bodies = bodies
        self.delay = delay
        self.hangs = hangs
    }

    var requests: [ImageLoaderRequest] { state.withLock { $0.requests } }
    var maxConcurrent: Int { state.withLock { $0.maxRunning } }

    func canLoad(_ url: URL) -> Bool { url.scheme == "mem" }

    func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let (data, response) = try await self.data(for: request)
                    continuation.yield(.response(response))
                    continuation.yield(.data(data))
                    continuation.finish()
                } catch { continuation.finish(throwing: error) }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) {
        state.withLock {
            $0.requests.append(request)
            $0.running += 1
            $0.maxRunning = max($0.maxRunning, $0.running)
        }
        defer { state.withLock { $0.running -= 1 } }
        if hangs {
            // Never finishes on its own; only cancellation ends it.
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
        if delay > .zero { try await Task.sleep(for: delay) }
        guard let body = bodies[request.url.path] else { throw ImageError.badStatusCode(404, url: request.url) }
        return (body, ImageLoaderResponse(statusCode: 200, headers: [:], expectedContentLength: Int64(body.count), url: request.url))
    }
}

/// An `ImageCaching` over another that counts calls and can fail or stall on purpose.
final class InstrumentedCache: ImageCaching {
    let base: any ImageCaching
    let failsStores: Bool
    let queryDelay: Duration
    let storeDelay: Duration
    let memoryStoreDelay: Duration
    private let calls = Mutex<(queries: Int, stores: Int)>((0, 0))

    init(base: any ImageCaching, failsStores: Bool = false, queryDelay: Duration = .zero, storeDelay: Duration = .zero,
         memoryStoreDelay: Duration = .zero) {
        self.base = base
        self.memoryStoreDelay = memoryStoreDelay
        self.failsStores = failsStores
        self.queryDelay = queryDelay
        self.storeDelay = storeDelay
    }

    var queries: Int { calls.withLock { $0.queries } }
    var stores: Int { calls.withLock { $0.stores } }

    func image(forKey key: String, query: ImageCacheQuery) async -> ImageCacheResult? {
        calls.withLock { $0.queries += 1 }
        if queryDelay > .zero { try? await Task.sleep(for: queryDelay) }
        return await base.image(forKey: key, query: query)
    }

    func store(_ image: Image?, data: Data?, extendedData: Data?, forKey key: String, to destination: ImageCacheType,
                      context: ImageContext) async throws {
        calls.withLock { $0.stores += 1 }
        if storeDelay > .zero, destination.includesDisk { try? await Task.sleep(for: storeDelay) }
        if memoryStoreDelay > .zero, destination == .memory { try? await Task.sleep(for: memoryStoreDelay) }
        if failsStores { throw ImageError.cacheWriteFailed(path: "/full", reason: "No space left on device") }
        try await base.store(image, data: data, extendedData: extendedData, forKey: key, to: destination, context: context)
    }

    func extendedData(forKey key: String) async -> Data? { await base.extendedData(forKey: key) }
    func setExtendedData(_ data: Data?, forKey key: String) async { await base.setExtendedData(data, forKey: key) }

    func removeImage(forKey key: String, from scope: ImageCacheType) async { await base.removeImage(forKey: key, from: scope) }
    func containsImage(forKey key: String, in scope: ImageCacheType) async -> ImageCacheType { await base.containsImage(forKey: key, in: scope) }
    func clear(_ scope: ImageCacheType) async { await base.clear(scope) }
}

import Foundation
import Synchronization
import Testing
@testable import WebImage

/// Interceptors (Coil's `Interceptor` chain) and the post-cache image modifier (Kingfisher's
/// `imageModifier`).
@Suite struct InterceptorTests {
    /// Answers every call with `image`, never proceeding (Coil's test `FakeInterceptor`).
    struct Answering: ImageInterceptor {
        let image: Image
        func intercept(_ chain: ImageInterceptorChain) async throws -> ImageResult {
            ImageResult(image: image, data: nil, cacheType: .none, url: chain.request.url)
        }
    }

    /// The order interceptors ran in.
    final class Log: Sendable {
        let names = Mutex<[String]>([])
    }

    /// Records the order it ran in, and rewrites `/old` to `/new`.
    struct Recording: ImageInterceptor {
        let name: String
        let log: Log
        func intercept(_ chain: ImageInterceptorChain) async throws -> ImageResult {
            log.names.withLock { $0.append(name) }
            var request = chain.request
            if request.url.path == "/old.png" {
                request.url = URL(string: request.url.absoluteString.replacingOccurrences(of: "/old.png", with: "/new.png"))!
            }
            return try await chain.proceed(request)
        }
    }

    /// Maps the result: sets the image's scale.
    struct Mapping: ImageInterceptor {
        func intercept(_ chain: ImageInterceptorChain) async throws -> ImageResult {
            var result = try await chain.proceed(chain.request)
            result.image.scale = 7
            return result
        }
    }

    static let blank = Image(bitmap: Fixtures.gradient(width: 3, height: 2))

    /// Coil: `FakeInterceptor` in `RealImageLoaderTest` (an interceptor that returns a result
    /// skips the engine): the loader is never asked, nor the caches.
    @Test func anInterceptorThatAnswersSkipsTheLoader() async throws {
        let h = try await ManagerHarness(configuration: {
            var configuration = ImageManager.Configuration()
            configuration.interceptors = [Answering(image: InterceptorTests.blank)]
            return configuration
        }())
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let image = try await h.manager.image(for: h.url("/a.png"))
        #expect(image.width == 3)
        let task = h.manager.imageTask(for: h.url("/a.png"))
        #expect(try await task.image.width == 3)
        var finished = false
        for try await event in h.manager.events(for: h.url("/a.png")) {
            if case .finished(let result) = event { finished = result.image.width == 3 }
        }
        #expect(finished)
        #expect(h.server.requestCount("/a.png") == 0, "the loader was never asked")
        await h.finish()
    }

    /// Coil: `RealInterceptorChainTest` (interceptors run in order; a request changed by one is
    /// the one the next sees): the configuration's run outside the call's, and the changed URL
    /// is the one loaded.
    @Test func interceptorsRunInOrderAndMayChangeTheRequest() async throws {
        let log = Log()
        let h = try await ManagerHarness(configuration: {
            var configuration = ImageManager.Configuration()
            configuration.interceptors = [Recording(name: "configured", log: log)]
            return configuration
        }())
        h.server.route("/new.png", .respond(body: ManagerHarness.png))
        var context = ImageContext()
        context.interceptors = [Recording(name: "call", log: log)]
        let result = try await h.manager.result(for: h.url("/old.png"), context: context)
        #expect(result.image.width == 64)
        #expect(log.names.withLock { $0 } == ["configured", "call"])
        #expect(h.server.requestCount("/new.png") == 1 && h.server.requestCount("/old.png") == 0)
        await h.finish()
    }

    /// An interceptor maps the result: every caller sees the mapped image.
    @Test func anInterceptorMapsTheResult() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        var context = ImageContext()
        context.interceptors = [Mapping()]
        #expect(try await h.manager.image(for: h.url("/a.png"), context: context).scale == 7)
        #expect(try await h.manager.image(for: h.url("/a.png")).scale == 1, "the cache holds the load's image")
        await h.finish()
    }

    /// Kingfisher: `KingfisherManagerTests` `testImageModifier...` (the modifier is applied to
    /// the image handed out, a cached one included, and the cache keeps the original): run on a
    /// load and on a memory hit, with the memory cache still holding the unmodified image.
    @Test func theModifierRunsOnAMemoryHitAndIsNeverStored() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let calls = Mutex(0)
        var context = ImageContext()
        context.imageModifier = ImageModifier { image in
            calls.withLock { $0 += 1 }
            var image = image
            image.scale = 3
            return image
        }
        let loaded = try await h.manager.result(for: h.url("/a.png"), context: context)
        #expect(loaded.cacheType == .none && loaded.image.scale == 3)
        let hit = try await h.manager.result(for: h.url("/a.png"), context: context)
        #expect(hit.cacheType == .memory && hit.image.scale == 3)
        let task = h.manager.imageTask(for: h.url("/a.png"), context: context)
        #expect(try await task.image.scale == 3)
        #expect(calls.withLock { $0 } == 3)
        #expect(h.manager.cachedImage(for: h.url("/a.png"))?.scale == 1, "the cache holds the unmodified image")
        #expect(h.manager.cachedImage(for: h.url("/a.png"), context: context)?.scale == 3, "what the call would be given")
        #expect(try await h.manager.image(for: h.url("/a.png")).scale == 1, "a call without the modifier")
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }

    /// A modifier does not keep callers from sharing a load: one with it and one without share
    /// one transfer, and each gets its own image.
    @Test func aModifierDoesNotStopSharing() async throws {
        let h = try await ManagerHarness()
        h.server.route("/slow.png", .delayed(.milliseconds(200), .respond(body: ManagerHarness.png)))
        var context = ImageContext()
        context.imageModifier = ImageModifier { image in
            var image = image
            image.scale = 2
            return image
        }
        async let modified = h.manager.image(for: h.url("/slow.png"), context: context)
        async let plain = h.manager.image(for: h.url("/slow.png"))
        let (a, b) = try await (modified, plain)
        #expect(a.scale == 2 && b.scale == 1)
        #expect(h.server.requestCount("/slow.png") == 1)
        await h.finish()
    }

    /// The configuration's default context carries a modifier to every plain call, memory hits
    /// included.
    @Test func aDefaultModifierReachesPlainCalls() async throws {
        let h = try await ManagerHarness(configuration: {
            var configuration = ImageManager.Configuration()
            configuration.defaultContext.imageModifier = ImageModifier { image in
                var image = image
                image.scale = 5
                return image
            }
            return configuration
        }())
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        #expect(try await h.manager.image(for: h.url("/a.png")).scale == 5)
        #expect(try await h.manager.image(for: h.url("/a.png")).scale == 5)
        #expect(try await h.manager.imageTask(for: h.url("/a.png")).image.scale == 5)
        await h.finish()
    }

    /// A hooked task still takes its priority and its cancellation: a task cancelled while its
    /// interceptor waits ends cancelled, and its load stops.
    @Test func aHookedTaskCancels() async throws {
        struct Slow: ImageInterceptor {
            func intercept(_ chain: ImageInterceptorChain) async throws -> ImageResult {
                try await chain.proceed(chain.request)
            }
        }
        let h = try await ManagerHarness()
        h.server.route("/slow.png", .delayed(.seconds(5), .respond(body: ManagerHarness.png)))
        var context = ImageContext()
        context.interceptors = [Slow()]
        let task = h.manager.imageTask(for: h.url("/slow.png"), options: .lowPriority, context: context)
        #expect(task.priority == .low)
        task.priority = .high
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.image }
        #expect(task.state == .cancelled)
        for _ in 0..<400 where await h.manager.inFlightCounts().loads > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(await h.manager.inFlightCounts().loads == 0)
        await h.finish()
    }
}

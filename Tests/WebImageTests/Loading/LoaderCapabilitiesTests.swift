import Foundation
import Testing
@testable import WebImage

/// Loaders declare what they do (`ImageLoaderCapabilities`); the manager reads that and never
/// the loader's type, so a plug-in that declares the same gets the same path.
@Suite struct LoaderCapabilitiesTests {
    /// A manager over `loader` whose cache, in a folder of its own, is never asked.
    func manager(_ loader: CustomLoader, _ configuration: ImageManager.Configuration = .init(), in directory: TemporaryDirectory) -> ImageManager {
        ImageManager(cache: ImageCache(namespace: "t", directory: directory.url, config: .init(cleanupInterval: nil)),
                     loaders: ImageLoaders([loader]), configuration: configuration)
    }

    /// A loader of the program's own, declaring what it is told to.
    struct CustomLoader: ImageLoader {
        var capabilities: ImageLoaderCapabilities = []
        func canLoad(_ url: URL) -> Bool { url.scheme == "mem" }
        func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
            AsyncThrowingStream { $0.finish() }
        }
        func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) {
            (ManagerHarness.png, ImageLoaderResponse(statusCode: 200, headers: [:], expectedContentLength: nil, url: request.url))
        }
    }

    @Test func theBuiltInsDeclareWhatTheyDo() {
        #expect(FileImageLoader().capabilities == .local)
        #expect(DataImageLoader().capabilities == .local)
        #expect(HTTPImageLoader.shared.capabilities == .appliesResponseModifier)
        var lifo = HTTPImageLoader.Configuration()
        lifo.executionOrder = .lifo
        #expect(HTTPImageLoader(configuration: lifo).capabilities == [.appliesResponseModifier, .startsNewestFirst])
        #expect(CustomLoader().capabilities == [])
    }

    /// The rate limiter holds a remote plug-in and lets a local one through, whatever its type.
    @Test(.timeLimit(.minutes(1))) func aPlugInDeclaredLocalSkipsTheRateLimiterAsTheFileLoaderDoes() async throws {
        for local in [false, true] {
            var configuration = ImageManager.Configuration()
            configuration.rateLimiter = RateLimiter(rate: 1, burst: 1)
            let loader = CustomLoader(capabilities: local ? .local : [])
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let manager = manager(loader, configuration, in: directory)
            let start = ContinuousClock.now
            for i in 0..<3 { _ = try await manager.image(for: URL(string: "mem:/\(i).png")!, options: .fromLoaderOnly) }
            let elapsed = ContinuousClock.now - start
            if local { #expect(elapsed < .milliseconds(900), "a local loader was rate-limited: \(elapsed)") }
            else { #expect(elapsed >= .milliseconds(1500), "a remote loader passed the limiter: \(elapsed)") }
        }
    }

    /// The context's response modifier reaches the response of a loader that does not apply it.
    @Test func theManagerModifiesTheResponseOfALoaderThatDoesNot() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let manager = manager(CustomLoader(), in: directory)
        var refusing = ImageContext()
        refusing.responseModifier = { _ in nil }
        await #expect(throws: ImageError.self) { _ = try await manager.image(for: URL(string: "mem:/a.png")!, options: .fromLoaderOnly, context: refusing) }
        var passing = ImageContext()
        passing.responseModifier = { $0 }
        _ = try await manager.image(for: URL(string: "mem:/a.png")!, options: .fromLoaderOnly, context: passing)
    }
}

import Foundation
import Testing
@testable import WebImage

/// `LoaderKind` tells a loader's kind by its exact type (no dynamic cast): which loaders skip
/// the rate limiter, and which HTTP loader makes the manager admit loads newest first.
@Suite struct LoaderKindTests {
    /// A loader of the program's own, which the library knows nothing of.
    struct CustomLoader: ImageLoader {
        func canLoad(_ url: URL) -> Bool { true }
        func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
            AsyncThrowingStream { $0.finish() }
        }
        func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) {
            (Data(), ImageLoaderResponse(statusCode: 200, headers: [:], expectedContentLength: 0, url: request.url))
        }
    }

    @Test func fileAndDataLoadersAreLocalTheOthersAreNot() {
        #expect(LoaderKind.isLocal(FileImageLoader()))
        #expect(LoaderKind.isLocal(DataImageLoader()))
        #expect(!LoaderKind.isLocal(HTTPImageLoader.shared))
        #expect(!LoaderKind.isLocal(CustomLoader()))
    }

    @Test func onlyAnHTTPLoaderConfiguredLIFOStartsNewestFirst() {
        var lifo = HTTPImageLoader.Configuration()
        lifo.executionOrder = .lifo
        #expect(LoaderKind.startsNewestFirst(HTTPImageLoader(configuration: lifo)))
        #expect(!LoaderKind.startsNewestFirst(HTTPImageLoader(configuration: .init())))
        #expect(!LoaderKind.startsNewestFirst(FileImageLoader()))
        #expect(!LoaderKind.startsNewestFirst(CustomLoader()))
    }
}

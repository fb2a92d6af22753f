import Foundation
import Testing
@testable import WebImage

@Suite struct ImageLoadersTests {
    @Test func fileURLsLoadInChunksWithProgress() async throws {
        let url = Corpus.directory.appendingPathComponent("webp/1.webp")
        let (data, response) = try await FileImageLoader().data(for: ImageLoaderRequest(url: url))
        #expect(data == (try Corpus.data("webp/1.webp")))
        #expect(response.expectedContentLength == Int64(data.count))
        await #expect(throws: ImageError.self) {
            _ = try await FileImageLoader().data(for: ImageLoaderRequest(url: URL(fileURLWithPath: "/nonexistent/a.png")))
        }
    }

    @Test func dataURLsDecodeBase64AndPercentEncoding() async throws {
        let png = try Corpus.data("png/basn6a08.png")
        let base64 = URL(string: "data:image/png;base64," + png.base64EncodedString())!
        let (data, response) = try await DataImageLoader().data(for: ImageLoaderRequest(url: base64))
        #expect(data == png && response.mimeType == "image/png")
        let text = try await DataImageLoader().data(for: ImageLoaderRequest(url: URL(string: "data:,hello%20world")!)).0
        #expect(String(decoding: text, as: UTF8.self) == "hello world")
        await #expect(throws: ImageError.self) {
            _ = try await DataImageLoader().data(for: ImageLoaderRequest(url: URL(string: "data:image/png;base64,***")!))
        }
    }

    @Test func registryPicksByScheme() async throws {
        let loaders = ImageLoaders.shared
        #expect(loaders.loader(for: URL(string: "https://example.com/a.png")!) is HTTPImageLoader)
        #expect(loaders.loader(for: URL(fileURLWithPath: "/tmp/a.png")) is FileImageLoader)
        #expect(loaders.loader(for: URL(string: "data:,x")!) is DataImageLoader)
        for bad in ["ftp://example.com/a.png", "a.png", "http://", "mailto:someone@example.com"] {
            let url = try #require(URL(string: bad))
            #expect(loaders.loader(for: url) == nil, "\(bad)")
            await #expect(throws: ImageError.invalidURL(url.absoluteString)) {
                for try await _ in loaders.load(ImageLoaderRequest(url: url)) {}
            }
        }
    }

    @Test func aLoaderAddedLaterIsTriedFirst() {
        let loaders = ImageLoaders()
        loaders.add(DataImageLoader())
        #expect(loaders.all.first is DataImageLoader)
        #expect(loaders.all.count == 4)
    }

    /// A loader the call names is used when it can load the URL, and the call fails (nil) when
    /// it cannot: the registry is asked only when the call names none.
    @Test func aNamedLoaderIsUsedOnlyForWhatItCanLoad() {
        let registry = ImageLoaders([FileImageLoader(), DataImageLoader()])
        let file = URL(fileURLWithPath: "/tmp/a.png"), web = URL(string: "http://example.com/a.png")!
        #expect(registry.loader(nil, for: file) is FileImageLoader)
        #expect(registry.loader(nil, for: web) == nil)
        #expect(registry.loader(DataImageLoader(), for: file) == nil, "the named loader cannot load it: not the registry's either")
        #expect(registry.loader(HTTPImageLoader.shared, for: web) is HTTPImageLoader)
    }
}

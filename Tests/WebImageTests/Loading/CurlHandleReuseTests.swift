import Foundation
import CCurl
import Testing
@testable import WebImage

/// libcurl before 8.1.0 keeps a pointer to the last header of a handle's previous response
/// across transfers (curl/curl#11101): a response on a reused handle whose first header line
/// begins with white space (an obsolete fold with nothing to fold onto) made libcurl 7.88.1
/// read that freed header, and realloc it: without AddressSanitizer the process aborted ("double
/// free detected"), so any server could bring a client down. Found by `scripts/fuzz.sh http`.
@Suite(.serialized) struct CurlHandleReuseTests {
    static let png = try! Image(bitmap: Fixtures.gradient(width: 8, height: 8)).encoded(as: .png)

    /// A 200 whose first header line is a fold with nothing before it (with a colon: libcurl refuses
    /// the line as a header without one before it stores it), then ordinary headers.
    static var foldedFirst: Data {
        Data("HTTP/1.1 200 OK\r\n \u{16}Content-Type: image/png\r\n".utf8)
            + Data("Content-Type: image/png\r\nContent-Length: \(png.count)\r\n\r\n".utf8) + png
    }

    @Test(.timeLimit(.minutes(2))) func aFoldFirstAfterAnOrdinaryResponseOnOneSlotEndsCleanly() async throws {
        let server = FaultServer()
        try await server.start()
        server.script("/ok", [.send(FaultServer.head([("Content-Type", "image/png"), ("Content-Length", "\(Self.png.count)"),
                                                      ("X-Long-Header", String(repeating: "v", count: 60))]) + Self.png), .close])
        server.script("/folded", [.send(Self.foldedFirst), .close])
        var configuration = HTTPImageLoader.Configuration()
        configuration.maximumConcurrentDownloads = 1
        let loader = HTTPImageLoader(configuration: configuration)
        for _ in 0..<3 {
            #expect(try await loader.data(for: ImageLoaderRequest(url: server.url("/ok"))).0 == Self.png)
            // The engine counts a handle as kept before the caller resumes.
            #expect(loader.engine.keptHandleCount == (CurlEngine.reusesHandles ? 1 : 0))
            do {
                let (data, _) = try await loader.data(for: ImageLoaderRequest(url: server.url("/folded")))
                #expect(data == Self.png)
            } catch let error as ImageError {
                guard case .network = error else { Issue.record("unexpected \(error)"); continue }
            }
        }
        #expect(loader.liveTransferCount == 0)
        await server.stop()
    }

    /// The handles are kept exactly where libcurl is fixed, read from the version string libcurl
    /// reports (a second reading of the number the engine decides on).
    @Test func handlesAreKeptOnlyFromLibcurl8Point1() throws {
        let version = try #require(String(cString: curl_version()).split(separator: " ").first?.split(separator: "/").last)
        let parts = version.split(separator: ".").compactMap { Int($0.prefix { $0.isNumber }) }
        try #require(parts.count >= 2)
        #expect(CurlEngine.reusesHandles == (parts[0] > 8 || (parts[0] == 8 && parts[1] >= 1)), "libcurl \(version)")
    }
}

import Foundation
import Testing
@testable import WebImage

/// libcurl's timings of each transfer, in the loader's response and in the manager's result.
@Suite(.serialized) struct TransferMetricsTests {
    @Test func theLoaderReportsTimingsBytesReuseAndVersion() async throws {
        let server = TestHTTPServer()
        try await server.start()
        server.route("/a.png", .respond(body: ManagerHarness.png))
        server.route("/moved", .redirect(to: "/a.png"))
        let loader = HTTPImageLoader()
        let first = try #require(try await loader.data(for: ImageLoaderRequest(url: server.url("/a.png"))).1.metrics)
        #expect(first.bytesReceived == Int64(ManagerHarness.png.count))
        #expect(!first.reusedConnection && first.httpVersion == "1.1" && first.redirects == 0)
        #expect(first.nameLookup <= first.connect && first.connect <= first.firstByte && first.firstByte <= first.total)
        #expect(first.total > .zero && first.tlsHandshake == .zero)
        let second = try #require(try await loader.data(for: ImageLoaderRequest(url: server.url("/moved"))).1.metrics)
        #expect(second.reusedConnection, "keep-alive: the second transfer used the first one's connection")
        #expect(second.redirects == 1)
        await server.stop()
    }

    @Test func theManagersResultCarriesThemForDownloadsOnly() async throws {
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        h.server.route("/p.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.progressiveJPEG))
        let downloaded = try await h.manager.result(for: h.url("/a.png"))
        #expect(downloaded.transferMetrics?.bytesReceived == Int64(ManagerHarness.png.count))
        #expect(try await h.manager.result(for: h.url("/a.png")).transferMetrics == nil, "a memory hit downloaded nothing")
        // Streamed to an event watcher with previews: the metrics come at the end all the same.
        var finished: ImageResult?
        for try await event in h.manager.events(for: h.url("/p.jpg"), options: .progressiveLoad) {
            if case .finished(let result) = event { finished = result }
        }
        #expect(finished?.transferMetrics?.bytesReceived == Int64(ManagerHarness.progressiveJPEG.count))
        await h.finish()
    }
}

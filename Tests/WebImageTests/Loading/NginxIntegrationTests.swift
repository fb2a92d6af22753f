import Foundation
import Testing
@testable import WebImage

/// Against a real nginx that scripts/nginx-integration.sh starts (CI runs it): keep-alive reuse,
/// HTTP/2 over TLS, certificate verification, gzip. Skipped when that script did not start one.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["WEBIMAGE_NGINX_HTTP"] != nil, "run scripts/nginx-integration.sh"))
struct NginxIntegrationTests {
    let environment = ProcessInfo.processInfo.environment
    var http: String { environment["WEBIMAGE_NGINX_HTTP"]! }
    var https: String { environment["WEBIMAGE_NGINX_HTTPS"]! }

    /// The access-log lines (connection number, requests on it, protocol, status, URI) for `marker`.
    func log(_ marker: String) throws -> [[String]] {
        try String(contentsOfFile: environment["WEBIMAGE_NGINX_LOG"]!, encoding: .utf8)
            .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }.filter { $0.last?.contains(marker) == true }
    }

    @Test func keepAliveReusesConnections() async throws {
        let loader = HTTPImageLoader()
        for i in 0..<20 { _ = try await loader.data(for: ImageLoaderRequest(url: URL(string: "\(http)/badge-alpha.png?keepalive=\(i)")!)) }
        try await Task.sleep(for: .milliseconds(200))   // nginx writes its log after the response
        let lines = try log("keepalive=")
        #expect(lines.count == 20)
        #expect(Set(lines.map { $0[0] }).count == 1, "20 sequential requests on \(Set(lines.map { $0[0] }).count) connections")
        #expect(lines.allSatisfy { $0[2] == "HTTP/1.1" })
    }

    /// A kept partial body is continued with a range request: nginx answers 206 with the rest
    /// (its ETag matched If-Range), and the caller gets the whole file with a 200.
    @Test func aPartialBodyIsResumedWithARangeRequest() async throws {
        let loader = HTTPImageLoader()
        let url = URL(string: "\(http)/photo-baseline.jpg?range=1")!
        let (whole, first) = try await loader.data(for: ImageLoaderRequest(url: url))
        let validator = try #require(ResumableDataStore.validator(of: first), "nginx sends Accept-Ranges and a strong ETag")
        loader.engine.resumable?.store(.init(data: whole.prefix(whole.count / 3), validator: validator), for: url.absoluteString)
        let (resumed, response) = try await loader.data(for: ImageLoaderRequest(url: url))
        #expect(resumed == whole && response.statusCode == 200 && response.expectedContentLength == Int64(whole.count))
        try await Task.sleep(for: .milliseconds(200))   // nginx writes its log after the response
        #expect(try log("range=1").map { $0[3] } == ["200", "206"])
    }

    @Test func http2OverTLSNeedsTheCertificateAccepted() async throws {
        let loader = HTTPImageLoader()
        let url = URL(string: "\(https)/photo-lossy.webp?h2")!
        do {
            _ = try await loader.data(for: ImageLoaderRequest(url: url))
            Issue.record("a self-signed certificate was accepted without allowsInvalidCertificates")
        } catch let error as ImageError {
            guard case .network = error else { Issue.record("\(error)"); return }
        }
        let (data, response) = try await loader.data(for: ImageLoaderRequest(url: url, allowsInvalidCertificates: true))
        let image = try Image(data: data)
        #expect(response.statusCode == 200)
        #expect(image.format == .webp)
        // Several at once share one HTTP/2 connection.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<8 {
                group.addTask {
                    _ = try await loader.data(for: ImageLoaderRequest(url: URL(string: "\(self.https)/bouncing-ball.gif?mux=\(i)")!,
                                                                       allowsInvalidCertificates: true))
                }
            }
            try await group.waitForAll()
        }
        try await Task.sleep(for: .milliseconds(200))
        let muxed = try log("mux=")
        let lines = muxed + (try log("?h2"))
        #expect(lines.allSatisfy { $0[2] == "HTTP/2.0" }, "\(lines)")
        #expect(Set(muxed.map { $0[0] }).count <= 2)
        // The connections (and, with libcurl 8.1.0 or later, the handles) of those accepting
        // transfers are reused: a request that does not accept the certificate is refused again.
        do {
            _ = try await loader.data(for: ImageLoaderRequest(url: URL(string: "\(https)/photo-lossy.webp?again")!))
            Issue.record("a reused handle kept certificate checks off")
        } catch let error as ImageError {
            guard case .network = error else { Issue.record("\(error)"); return }
        }
    }

    @Test func gzipIsDecodedByLibcurl() async throws {
        let (data, response) = try await HTTPImageLoader().data(for: ImageLoaderRequest(url: URL(string: "\(http)/text.txt")!))
        #expect(response.headers["content-encoding"] == "gzip")
        #expect(String(decoding: data, as: UTF8.self) == String(repeating: "swift-web-image gzip check\n", count: 4000))
    }
}

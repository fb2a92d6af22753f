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
    }

    @Test func gzipIsDecodedByLibcurl() async throws {
        let (data, response) = try await HTTPImageLoader().data(for: ImageLoaderRequest(url: URL(string: "\(http)/text.txt")!))
        #expect(response.headers["content-encoding"] == "gzip")
        #expect(String(decoding: data, as: UTF8.self) == String(repeating: "swift-web-image gzip check\n", count: 4000))
    }
}

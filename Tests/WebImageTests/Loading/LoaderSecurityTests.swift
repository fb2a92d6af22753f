import Foundation
import Testing
@testable import WebImage

/// The HTTP loader's own defences, for every user of the library: http and https only, first
/// request and redirects; a redirect filter asked at every hop; the environment's proxy
/// variables ignored unless asked for; through a proxy, the target's address checked before the
/// request is handed over. Each test points what it forbids at a `Canary` listener on loopback
/// and expects it never to be reached.
@Suite(.serialized) struct LoaderSecurityTests {
    static let body = Data("an image's bytes".utf8)

    func withServer(_ body: (TestHTTPServer, Canary) async throws -> Void) async throws {
        let server = TestHTTPServer(), canary = Canary()
        try await server.start()
        try await canary.start()
        do { try await body(server, canary) } catch { await server.stop(); await canary.stop(); throw error }
        await server.stop()
        await canary.stop()
    }

    func isRedirectRefusal(_ error: any Error) -> Bool {
        if case .redirectNotAllowed = error as? ImageError { return true }
        return false
    }

    @Test func redirectsToOtherProtocolsAreNotFollowed() async throws {
        try await withServer { server, canary in
            let loader = HTTPImageLoader()
            for scheme in ["ftp", "ftps", "gopher", "dict", "telnet", "imap", "pop3", "smtp", "ldap", "rtsp", "mqtt", "scp", "sftp", "file"] {
                let target = scheme == "file" ? "file:///etc/passwd" : "\(scheme)://127.0.0.1:\(canary.port)/x"
                server.route("/\(scheme)", .redirect(to: target))
                await #expect(performing: { try await loader.data(for: ImageLoaderRequest(url: server.url("/\(scheme)"))) },
                              throws: { isRedirectRefusal($0) })
            }
            #expect(canary.connections == 0, "a non-HTTP redirect reached the canary")
        }
    }

    /// A name that resolves to a private address (`localhost`, from /etc/hosts: no DNS packet)
    /// is refused on the address, as a first URL and as a redirect from an allowed origin.
    @Test func aNameThatResolvesToAPrivateAddressIsRefused() async throws {
        let canary = Canary(), front = TestHTTPServer()
        try await canary.start()
        try await front.start(host: "127.0.0.2")
        let refused: (any Error) -> Bool = { error in
            if case .addressNotAllowed = error as? ImageError { return true }
            return false
        }
        var configuration = HTTPImageLoader.Configuration()
        configuration.addressPolicy = .publicOnly(allowing: [IPNetwork("127.0.0.2/32")!])
        let loader = HTTPImageLoader(configuration: configuration)
        await #expect(performing: { try await loader.data(for: ImageLoaderRequest(url: URL(string: "http://localhost:\(canary.port)/x")!)) },
                      throws: refused)
        front.route("/to-name", .redirect(to: "http://localhost:\(canary.port)/x"))
        await #expect(performing: { try await loader.data(for: ImageLoaderRequest(url: front.url("/to-name"))) }, throws: refused)
        #expect(front.requestCount("/to-name") == 1, "the allowed origin was asked")
        #expect(canary.connections == 0, "a name resolving to loopback was connected to")
        await front.stop()
        await canary.stop()
    }

    @Test func theRedirectFilterJudgesEveryHop() async throws {
        try await withServer { server, canary in
            let port = server.port
            var configuration = HTTPImageLoader.Configuration()
            configuration.redirectFilter = { $0.port == port }
            let loader = HTTPImageLoader(configuration: configuration)
            server.route("/a", .redirect(to: "/b"))
            server.route("/b", .redirect(to: "http://127.0.0.1:\(canary.port)/c", status: 307))
            await #expect(performing: { try await loader.data(for: ImageLoaderRequest(url: server.url("/a"))) },
                          throws: { isRedirectRefusal($0) })
            #expect(server.requestCount("/b") == 1, "the allowed hop was followed")
            #expect(canary.connections == 0, "the refused hop was connected to")
            // An allowed chain still ends in its image.
            server.route("/c", .redirect(to: "/d"))
            server.route("/d", .respond(body: Self.body))
            let (data, _) = try await loader.data(for: ImageLoaderRequest(url: server.url("/c")))
            #expect(data == Self.body)
        }
    }

    /// In a child process (`webimage get`) whose environment names the canary as proxy: the
    /// environment of the test process itself is left alone. curl, which reads the variables,
    /// shows that the same environment does reach the canary.
    @Test func theEnvironmentsProxyVariablesAreIgnored() async throws {
        try await withServer { server, canary in
            server.route("/img.png", .respond(body: ManagerHarness.png))
            let proxy = "http://127.0.0.1:\(canary.port)"
            var environment = ["NO_PROXY": "", "no_proxy": ""]
            for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"] { environment[name] = proxy }
            let folder = TemporaryDirectory("proxy-env")
            defer { folder.remove() }
            let output = folder.url.appendingPathComponent("img.png")
            let run = try CLIRunner.run(["get", server.url("/img.png").absoluteString, "-o", output.path, "--no-cache"], environment: environment)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try Data(contentsOf: output) == ManagerHarness.png)
            #expect(canary.connections == 0, "the request went to the environment's proxy")
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = ["-s", "-o", "/dev/null", "--max-time", "1", server.url("/img.png").absoluteString]
            curl.environment = environment
            try curl.run()
            curl.waitUntilExit()
            #expect(canary.connections == 1, "the environment names the canary")
        }
    }

    @Test func throughAProxyTheTargetsAddressIsCheckedFirst() async throws {
        let proxy = Canary()
        try await proxy.start(host: "127.0.0.2")
        defer { Task { await proxy.stop() } }
        var configuration = HTTPImageLoader.Configuration()
        configuration.proxy = "http://127.0.0.2:\(proxy.port)"
        configuration.addressPolicy = .publicOnly(allowing: [IPNetwork("127.0.0.2/32")!])
        configuration.timeout = .milliseconds(500)
        configuration.totalTimeoutFactor = 1
        let loader = HTTPImageLoader(configuration: configuration)
        for target in ["http://127.0.0.1:9999/x", "http://169.254.169.254/latest/meta-data/", "http://localhost:9999/x",
                       "http://[::1]:9999/x", "http://0x7f.1:9999/x", "http://2130706433:9999/x", "http://[::ffff:0:127.0.0.1]/x",
                       "https://10.0.0.1/x"] {
            await #expect(performing: { try await loader.data(for: ImageLoaderRequest(url: URL(string: target)!)) },
                          throws: { error in
                              if case .addressNotAllowed = error as? ImageError { return true }
                              return false
                          })
        }
        #expect(proxy.connections == 0, "a private target was handed to the proxy")
        // An allowed target goes to the proxy (which never answers).
        _ = try? await loader.data(for: ImageLoaderRequest(url: URL(string: "http://127.0.0.2:9/x")!))
        #expect(proxy.connections == 1)
    }
}

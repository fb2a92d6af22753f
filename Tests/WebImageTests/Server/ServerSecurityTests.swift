import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// `webimage serve` against what a stranger can send: the allowed sources hold for every hop and
/// for the URL libcurl will really request, local files cannot wedge or reveal anything, the
/// signature is checked before the path is read, and equal requests share one work. What must
/// not be reached is a `Canary` on loopback; every test connects to loopback only.
@Suite(.serialized) struct ServerSecurityTests {
    static let png = ManagerHarness.png

    func text(_ reply: Curl.Reply) -> String { String(decoding: reply.body, as: UTF8.self) }

    /// `source` in base64url: bytes the plain form would decode (`%2e`, `\`) reach the server as written.
    func encoded(_ source: String) -> String { Base64URL.encode(Array(source.utf8)) }

    @Test func redirectsStayWithinTheAllowedSources() async throws {
        let canary = Canary()
        try await canary.start(host: "127.0.0.2")
        // 127.0.0.2 is an allowed network (an internal host) but not an allowed source.
        let h = try await ServerHarness {
            $0.allowedSources = ["127.0.0.1"]
            $0.allowedNetworks = ["127.0.0.0/8"]
        }
        let inside = "http://127.0.0.2:\(canary.port)/internal.png"
        h.origin.route("/jump.png", .redirect(to: inside))
        for hop in 1...4 { h.origin.route("/chain\(hop).png", .redirect(to: "/chain\(hop + 1).png", status: hop % 2 == 0 ? 301 : 307)) }
        h.origin.route("/chain5.png", .redirect(to: inside, status: 308))
        h.origin.route("/ftp.png", .redirect(to: "ftp://127.0.0.2:\(canary.port)/x"))
        h.origin.route("/hop.png", .redirect(to: "/a.png"))
        h.origin.route("/a.png", .respond(body: Self.png))
        for source in ["/jump.png", "/chain1.png", "/ftp.png"] {
            let reply = try await Curl.get(h.url(options: "w:10", source: source))
            #expect(reply.status == 403 && text(reply).contains("redirects"), "\(source): \(reply.status) \(text(reply))")
        }
        #expect(h.origin.requestCount("/chain5.png") == 1, "the allowed hops were followed")
        #expect(canary.connections == 0, "a redirect left the allowed sources")
        // A redirect within them is followed.
        #expect(try await Curl.get(h.url(options: "w:10", source: "/hop.png")).status == 200)
        await h.finish()
        await canary.stop()
    }

    @Test func aPrefixHoldsForTheURLLibcurlRequests() async throws {
        let prefixed = try await ServerHarness(withOrigin: { configuration, origin in
            configuration.allowedSources = [origin.absoluteString + "f/"]
        })
        let root = prefixed.origin.url("/").absoluteString.dropLast()
        prefixed.origin.route("/f/a.png", .respond(body: Self.png))
        prefixed.origin.route("/secret.png", .respond(body: Self.png))
        // What libcurl or a lenient origin reads outside /f/, in every spelling.
        let escapes = ["/f/../secret.png", "/f/%2e%2e/secret.png", "/f/%2E%2E/secret.png", "/f/.%2e/secret.png", "/f/..%2fsecret.png",
                       "/f/..%2Fsecret.png", "/f/..\\secret.png", "/f/..%5csecret.png", "/f/./../secret.png", "/F/a.png"]
        for escape in escapes {
            let reply = try await Curl.get(prefixed.url("/w:10/" + encoded(root + escape)))
            #expect(reply.status == 403, "\(escape): \(reply.status) \(text(reply))")
        }
        // Credentials, and a backslash before an @ (libcurl reads the host after it).
        for source in ["http://user:pw@" + root.dropFirst(7) + "/f/a.png", root + "\\@127.0.0.2/f/a.png"] {
            let reply = try await Curl.get(prefixed.url("/w:10/" + encoded(String(source))))
            #expect(reply.status == 403 || reply.status == 400, "\(source): \(reply.status) \(text(reply))")
        }
        #expect(prefixed.origin.requestCount("/secret.png") == 0, "an escape reached the origin")
        #expect(try await Curl.get(prefixed.url("/w:10/" + encoded(root + "/f/a.png"))).status == 200)
        #expect(try await Curl.get(prefixed.url("/w:10/" + encoded(root + "/f/./a.png"))).status == 200, "a dot segment within the prefix")
        await prefixed.finish()
    }

    @Test(.timeLimit(.minutes(2))) func localFilesCannotWedgeTheLoaderNorTellTheFileSystem() async throws {
        let files = TemporaryDirectory("serve-local")
        defer { files.remove() }
        let root = files.url.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("folder"), withIntermediateDirectories: true)
        try Self.png.write(to: root.appendingPathComponent("a.png"))
        try Data(count: 4096).write(to: root.appendingPathComponent("big.png"))
        #expect(mkfifo(root.appendingPathComponent("fifo.png").path, 0o644) == 0)
        let h = try await ServerHarness {
            $0.fileRoot = root.path
            $0.maximumSourceBytes = 1024
            $0.processingTimeoutSeconds = 5
        }
        func get(_ path: String) async throws -> Curl.Reply { try await Curl.get(h.url("/w:10/plain/local://" + path)) }
        let start = ContinuousClock.now
        for path in ["/fifo.png", "/folder", "/folder/"] {
            let reply = try await get(path)
            #expect(reply.status == 404, "\(path): \(reply.status)")
            #expect(!text(reply).contains(root.path) && !text(reply).contains("/tmp"), "\(path) told the file system: \(text(reply))")
        }
        #expect(ContinuousClock.now - start < .seconds(3), "a FIFO held the request")
        // The loader is not wedged: the next file is served at once.
        #expect(try await get("/a.png").status == 200)
        let big = try await get("/big.png")
        #expect(big.status == 422 && text(big).contains("1024"), "\(big.status) \(text(big))")
        await h.finish()
    }

    @Test func theLoaderRefusesAFIFOWithoutWaiting() async throws {
        let files = TemporaryDirectory("fifo")
        defer { files.remove() }
        let fifo = files.url.appendingPathComponent("pipe")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        try Self.png.write(to: files.url.appendingPathComponent("a.png"))
        let loader = FileImageLoader(maximumFileSize: 100)
        await #expect(throws: ImageError.self) { try await loader.data(for: ImageLoaderRequest(url: fifo)) }
        await #expect(throws: ImageError.self) { try await loader.data(for: ImageLoaderRequest(url: files.url)) }
        await #expect(performing: { try await loader.data(for: ImageLoaderRequest(url: files.url.appendingPathComponent("a.png"))) },
                      throws: { error in
                          if case .responseTooLarge = error as? ImageError { return true }
                          return false
                      })
        let (data, _) = try await FileImageLoader().data(for: ImageLoaderRequest(url: files.url.appendingPathComponent("a.png")))
        #expect(data == Self.png)
    }

    @Test func theSignatureIsCheckedBeforeThePathIsRead() async throws {
        let h = try await ServerHarness()
        h.origin.route("/a.png", .respond(body: Self.png))
        let source = h.origin.url("/a.png").absoluteString
        for path in ["/_/w:100000/plain/\(source)", "/_/nonsense:1/plain/\(source)", "/_/w:10/plain/\(source)@bmp", "/_/!!!",
                     "/_/w:10/not-base64-<script>", "/x"] {
            let reply = try await Curl.get(URL(string: "http://127.0.0.1:\(h.port)" + path.replacingOccurrences(of: "<", with: "%3C").replacingOccurrences(of: ">", with: "%3E"))!)
            #expect(reply.status == 403, "\(path): \(reply.status)")
            #expect(!text(reply).contains("100000") && !text(reply).contains("nonsense") && !text(reply).contains("script"), "\(path) echoed: \(text(reply))")
        }
        #expect(h.origin.requestCount("/a.png") == 0)
        // Signed, a malformed path is still a 400 with its reason.
        #expect(try await Curl.get(h.url("/w:100000/plain/" + source)).status == 400)
        await h.finish()
    }

    /// 1,000 requests at once for one new result, with the default limits: one processing slot,
    /// one origin request, 1,000 answers (before: 64 answers and 936 503s).
    @Test func requestsThatJoinAWorkTakeNoSlot() async throws {
        let h = try await ServerHarness()
        h.origin.route("/a.png", .delayed(.milliseconds(500), .respond(body: Self.png)))
        let url = h.url(options: "w:10", source: "/a.png").absoluteString
        let config = h.directory.url.appendingPathComponent("curl.conf")
        try String(repeating: "url = \"\(url)\"\noutput = \"/dev/null\"\n", count: 1000).write(to: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "--parallel", "--parallel-immediate", "--parallel-max", "300", "-w", "%{http_code}\n", "-K", config.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let statuses = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        process.waitUntilExit()
        #expect(statuses.count == 1000)
        let counts = Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count)
        #expect(counts["200"] == 1000, "\(counts)")
        #expect(h.origin.requestCount("/a.png") == 1)
        await h.finish()
    }
}

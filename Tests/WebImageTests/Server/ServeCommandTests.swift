import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// `webimage serve` as a process: it starts from a configuration file, shows its metrics, and
/// stops on SIGTERM with the requests in flight either answered or refused cleanly, its cache
/// writes flushed and no temporary file left.
@Suite(.serialized) struct ServeCommandTests {
    @Test func sigtermDuringTwoHundredRequests() async throws {
        let origin = TestHTTPServer()
        try await origin.start()
        for index in 0..<20 { origin.route("/\(index).png", .delayed(.milliseconds(300), .respond(body: ManagerHarness.png))) }
        let directory = TemporaryDirectory("serve-cli")
        defer { directory.remove() }
        let cache = directory.url.appendingPathComponent("cache")
        let config = directory.url.appendingPathComponent("serve.json")
        try Data("""
            {"port": 0, "allowedNetworks": ["127.0.0.1"], "cacheDirectory": "\(cache.path)", "maximumPendingRequests": 500}
            """.utf8).write(to: config)
        let running = try CLIRunner.start(["serve", "--config", config.path],
                                          environment: ["WEBIMAGE_KEY": "74657374206b6579", "WEBIMAGE_SALT": "746573742073616c74"])
        // The port, from the line it prints once listening.
        let (port, printed) = try await running.listeningPort()
        #expect(port > 0, "\(printed)")
        let signer = URLSigner(key: Array("test key".utf8), salt: Array("test salt".utf8))
        func url(_ index: Int) -> URL {
            URL(string: "http://127.0.0.1:\(port)" + signer.sign("/w:\(index % 10 + 1)/plain/" + origin.url("/\(index % 20).png").absoluteString))!
        }
        var client = HTTPImageLoader.Configuration()
        client.maximumConcurrentDownloads = 64
        client.acceptableStatusCodes = Set(200..<600)
        let loader = HTTPImageLoader(configuration: client)
        // The metrics of the library and the server, in Prometheus' format.
        _ = try await loader.data(for: ImageLoaderRequest(url: url(0)))
        let metrics = String(decoding: try await loader.data(for: ImageLoaderRequest(url: URL(string: "http://127.0.0.1:\(port)/metrics")!)).0,
                             as: UTF8.self)
        #expect(metrics.contains("webimage_server_requests_total") && metrics.contains("webimage_loads_total"))
        // Time per stage: the library's, and the server's encode beside them.
        #expect(metrics.contains(#"webimage_stage_duration_seconds_count{stage="decode"}"#), "\(metrics)")
        #expect(metrics.contains(#"webimage_stage_duration_seconds_count{stage="encode"}"#))

        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<200 {
                let request = ImageLoaderRequest(url: url(index + 1))
                group.addTask {
                    do {
                        let (data, response) = try await loader.data(for: request)
                        if response.statusCode == 200 { return (try? Image(data: data)) == nil ? "broken" : "ok" }
                        return "status \(response.statusCode)"
                    } catch {
                        return "refused"   // the connection was refused or closed before a response
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(100))
            running.signal(SIGTERM)
            return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
        let output = running.wait()
        #expect(output.status == 0, "\(output.stderr.suffix(2000))")
        #expect(outcomes["broken"] == nil, "\(outcomes)")
        #expect(Set(outcomes.keys).isSubset(of: ["ok", "refused", "status 503"]), "\(outcomes)")
        #expect((outcomes["ok"] ?? 0) > 0, "the requests in flight were answered: \(outcomes)")
        let files = (FileManager.default.enumerator(atPath: cache.path)?.allObjects as? [String]) ?? []
        #expect(!files.contains { $0.contains(".tmp-") }, "no temporary file left: \(files.filter { $0.contains(".tmp-") })")
        #expect(files.count > 1, "the results were written to the disk cache")
        await origin.stop()
    }

    /// `serve --demo` (what `scripts/serve.sh` runs): the samples as the origin, signed URLs
    /// printed, each of them answered.
    @Test func theDemoPrintsURLsThatWork() async throws {
        let directory = TemporaryDirectory("serve-demo")
        defer { directory.remove() }
        let running = try CLIRunner.start(["serve", "--demo", "--port", "0"], environment: ["XDG_CACHE_HOME": directory.url.path])
        var printed = ""
        for _ in 0..<400 where printed.split(separator: "\n").count < 5 {
            printed += String(decoding: running.out.fileHandleForReading.availableData, as: UTF8.self)
        }
        let urls = printed.split(separator: "\n").compactMap { URL(string: String($0)) }
        #expect(urls.count == 5, "\(printed)")
        for url in urls {
            let reply = try await Curl.get(url)
            #expect(reply.status == 200 && !reply.body.isEmpty, "\(url): \(reply.status)")
        }
        running.signal(SIGTERM)
        #expect(running.wait().status == 0)
    }
}

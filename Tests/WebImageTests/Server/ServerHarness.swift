import Foundation
import Synchronization
@testable import WebImage
@testable import WebImageServer

/// An image server on a free loopback port over an origin (the in-process test server), for one
/// test, and a real client: curl.
final class ServerHarness: Sendable {
    let origin = TestHTTPServer()
    let directory = TemporaryDirectory("serve")
    let server: ImageServer
    let signer = URLSigner(key: Array("test key".utf8), salt: Array("test salt".utf8))
    private let task: Mutex<Task<Void, any Error>?> = Mutex(nil)
    private let portValue = Mutex(0)

    var port: Int { portValue.withLock { $0 } }

    /// A server signed with the harness's key and salt, allowed to reach 127.0.0.1 (the origin);
    /// `configure` changes the rest.
    convenience init(configure: (inout ServerConfiguration) -> Void = { _ in }) async throws {
        try await self.init(withOrigin: { configuration, _ in configure(&configuration) })
    }

    /// The same, where `configure` also gets the origin's root URL (`http://127.0.0.1:PORT/`).
    init(withOrigin configure: (inout ServerConfiguration, URL) -> Void) async throws {
        try await origin.start()
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.key = "7465737420 6b6579".replacingOccurrences(of: " ", with: "")
        configuration.salt = "746573742073616c74"
        configuration.allowedNetworks = ["127.0.0.1"]
        configuration.cacheDirectory = directory.url.appendingPathComponent("cache").path
        // Sources are decoded in workers, as `webimage serve` decodes them: the test bundle
        // cannot be one, the webimage executable built beside it is.
        configuration.decodingWorkerExecutable = CLIRunner.executable?.path
        configure(&configuration, origin.url("/"))
        server = try ImageServer(configuration: configuration)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let server = self.server
        task.withLock { $0 = Task { try await server.run { port in continuation.yield(port) } } }
        for await port in ports {
            portValue.withLock { $0 = port }
            break
        }
    }

    /// The signed URL of `path` (options and source, starting with /).
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)" + signer.sign(path))! }

    /// `path` with the source `origin` serves at `source`, signed.
    func url(options: String, source: String) -> URL {
        url("/\(options)/plain/" + origin.url(source).absoluteString)
    }

    func finish() async {
        let task = task.withLock { $0 }
        task?.cancel()
        _ = await task?.result
        await origin.stop()
        directory.remove()
    }
}

/// curl as the client: status, headers (lowercased names) and body.
enum Curl {
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    /// `url` fetched by curl on a thread of its own: an async test that waits for a server in
    /// this process holds no thread of the cooperative pool, which that server needs (two tests
    /// that each blocked a pool thread on two cores waited for each other until curl's time-out).
    static func get(_ url: URL, headers: [String: String] = [:], method: String = "GET") async throws -> Reply {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try blockingGet(url, headers: headers, method: method) }) }.start()
        }
    }

    /// `get` on the caller's thread.
    static func blockingGet(_ url: URL, headers: [String: String] = [:], method: String = "GET") throws -> Reply {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "--path-as-is", "-o", folder.appendingPathComponent("body").path, "-D", folder.appendingPathComponent("headers").path,
                             "-w", "%{http_code}", "--max-time", "30", "-X", method] + headers.flatMap { ["-H", "\($0.key): \($0.value)"] } + [url.absoluteString]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let status = Int(String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)) ?? 0
        process.waitUntilExit()
        var fields: [String: String] = [:]
        let text = (try? String(contentsOf: folder.appendingPathComponent("headers"), encoding: .utf8)) ?? ""
        for line in text.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Reply(status: status, headers: fields, body: (try? Data(contentsOf: folder.appendingPathComponent("body"))) ?? Data())
    }
}

import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// `webimage serve` under connections that send nothing: idle and slow-header connections are
/// closed at the deadline, 1,100 of them under a 1024-descriptor limit leave `/health` answering
/// without a spinning core, and SIGTERM ends the requests in flight within the stop time.
@Suite(.serialized) struct ServerConnectionTests {
    /// A TCP connection to 127.0.0.1:`port` (a blocking socket), or -1.
    static func connect(_ port: Int) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 { close(descriptor); return -1 }
        return descriptor
    }

    /// Whether the server closed `descriptor` within `seconds` (a read returns 0 or fails).
    static func closedByServer(_ descriptor: Int32, within seconds: Int) -> Bool {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        let count = read(descriptor, &byte, 1)
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// `webimage serve` in a child whose descriptor limit is `descriptors` (soft and hard), with
    /// `json` added to its configuration; the port it listens on.
    static func serve(descriptors: Int, json: String, directory: TemporaryDirectory) async throws -> (CLIRunner.Running, Int) {
        let config = directory.url.appendingPathComponent("serve.json")
        try Data("""
            {"port": 0, "insecure": true, "cacheDirectory": "\(directory.url.appendingPathComponent("cache").path)"\(json)}
            """.utf8).write(to: config)
        guard let webimage = CLIRunner.executable else { throw CocoaError(.fileNoSuchFile) }
        let running = try CLIRunner.start(["-c", "ulimit -n \(descriptors) && exec \"$0\" serve --config \"$1\"", webimage.path, config.path],
                                          executable: URL(fileURLWithPath: "/bin/bash"))
        let (port, printed) = try await running.listeningPort()
        #expect(port > 0, "\(printed)")
        return (running, port)
    }

    /// The CPU seconds `pid` has used (user and system).
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func health(_ port: Int) async throws -> (Int, Duration) {
        let start = ContinuousClock.now
        let reply = try await Curl.get(URL(string: "http://127.0.0.1:\(port)/health")!)
        return (reply.status, ContinuousClock.now - start)
    }

    @Test func idleAndSlowHeaderConnectionsCloseAtTheDeadline() async throws {
        let h = try await ServerHarness { $0.idleTimeoutSeconds = 1 }
        let silent = Self.connect(h.port), slow = Self.connect(h.port), keptAlive = Self.connect(h.port)
        #expect(silent >= 0 && slow >= 0 && keptAlive >= 0)
        defer { close(silent); close(slow); close(keptAlive) }
        // Headers that never end, a byte every 300 ms: the deadline is on the whole head.
        let drip = Task.detached {
            for byte in Array("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8) {
                var value = byte
                if write(slow, &value, 1) != 1 { return }
                try? await Task.sleep(for: .milliseconds(300))
            }
        }
        // One request, then silence on the kept-alive connection.
        let request = Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        #expect(write(keptAlive, request, request.count) == request.count)
        var answer = [UInt8](repeating: 0, count: 512)
        #expect(read(keptAlive, &answer, answer.count) > 0)
        let start = ContinuousClock.now
        #expect(Self.closedByServer(silent, within: 4), "a connection that sent nothing stayed open")
        #expect(Self.closedByServer(slow, within: 4), "slow headers were not cut")
        #expect(Self.closedByServer(keptAlive, within: 4), "an idle keep-alive connection stayed open")
        #expect(ContinuousClock.now - start < .seconds(4))
        drip.cancel()
        #expect(try await Self.health(h.port).0 == 200)
        await h.finish()
    }

    @Test func elevenHundredIdleConnectionsUnderA1024Limit() async throws {
        // This process holds the clients' side: it needs more than 1,100 descriptors.
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4096 {
            limit.rlim_cur = min(limit.rlim_max, 4096)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        try #require(limit.rlim_cur >= 2400, "this process may open only \(limit.rlim_cur) descriptors")
        let directory = TemporaryDirectory("serve-idle")
        defer { directory.remove() }
        let (running, port) = try await Self.serve(descriptors: 1024, json: #", "idleTimeoutSeconds": 60"#, directory: directory)
        var clients: [Int32] = []
        defer { for client in clients { close(client) } }
        for _ in 0..<1100 {
            let client = Self.connect(port)
            if client >= 0 { clients.append(client) }
        }
        #expect(clients.count == 1100, "connections made: \(clients.count)")
        for _ in 0..<5 {
            let (status, took) = try await Self.health(port)
            #expect(status == 200 && took < .seconds(1), "/health: \(status) in \(took)")
            try await Task.sleep(for: .milliseconds(300))
        }
        // A spinning core uses a CPU second every second. Measured over quiet one-second windows
        // (no request in them), up to three, so that a sanitizer's slow accept of the 1,100
        // connections can finish in the first; an event loop that spins fails all three.
        var windows: [Double] = []
        for _ in 0..<3 {
            let before = Self.cpuSeconds(running.process.processIdentifier)
            try await Task.sleep(for: .seconds(1))
            windows.append(Self.cpuSeconds(running.process.processIdentifier) - before)
            if windows.last! < 0.25 { break }
        }
        #expect(windows.last! < 0.25, "the server used \(windows) s of CPU in quiet one-second windows with 1,100 idle connections")
        #expect(try await Self.health(port).0 == 200)
        running.signal(SIGTERM)
        let output = running.wait()
        #expect(output.status == 0, "\(output.stderr.suffix(1500))")
    }

    /// 200 requests in flight that would take 30 s each: SIGTERM ends the process within the
    /// stop time, every request answered (or refused before it was read).
    @Test(.timeLimit(.minutes(2))) func sigtermEndsWithinTheStopTime() async throws {
        let origin = TestHTTPServer()
        try await origin.start()
        for index in 0..<20 { origin.route("/\(index).png", .stallAfter(bytes: 10, body: ManagerHarness.png)) }
        let directory = TemporaryDirectory("serve-stop")
        defer { directory.remove() }
        let (running, port) = try await Self.serve(descriptors: 4096, json: """
            , "allowedNetworks": ["127.0.0.1"], "processingTimeoutSeconds": 30, "maximumPendingRequests": 500, "stopTimeoutSeconds": 2
            """, directory: directory)
        var client = HTTPImageLoader.Configuration()
        client.maximumConcurrentDownloads = 200
        client.timeout = .seconds(60)
        client.acceptableStatusCodes = Set(200..<600)
        let loader = HTTPImageLoader(configuration: client)
        let start = ContinuousClock.now
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<200 {
                let url = URL(string: "http://127.0.0.1:\(port)/_/w:\(index % 10 + 1)/plain/" + origin.url("/\(index % 20).png").absoluteString)!
                group.addTask {
                    do { return "status \(try await loader.data(for: ImageLoaderRequest(url: url)).1.statusCode)" } catch { return "refused" }
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            running.signal(SIGTERM)
            return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
        let output = running.wait()
        let took = ContinuousClock.now - start
        #expect(output.status == 0, "\(output.stderr.suffix(1500))")
        #expect(took < .seconds(8), "the stop took \(took)")
        #expect(Set(outcomes.keys).isSubset(of: ["status 503", "refused"]), "\(outcomes)")
        #expect((outcomes["status 503"] ?? 0) > 0, "the requests in flight were answered: \(outcomes)")
        await origin.stop()
    }
}

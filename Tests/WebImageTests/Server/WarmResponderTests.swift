import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// Results fresh in the response cache are answered on the connection's event loop
/// (`WarmResponder`) with the same answer the responder gives, and in the requests' order.
@Suite(.serialized) struct WarmResponderTests {
    static let png = ManagerHarness.png

    /// Sends `requests` (raw HTTP/1.1) on one connection in one write and returns what came back
    /// until the server closed or `seconds` passed.
    static func pipelined(port: Int, _ requests: [String], seconds: Double = 5) throws -> String {
        let script = """
        import socket, sys, time
        s = socket.create_connection(("127.0.0.1", \(port)))
        s.sendall(sys.stdin.buffer.read())
        s.settimeout(0.5)
        out = b""; end = time.time() + \(seconds)
        while time.time() < end:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                if out.count(b"HTTP/1.1 ") >= \(requests.count): break
                continue
            if not chunk: out += b"<closed>"; break
            out += chunk
        sys.stdout.buffer.write(out)
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(requests.joined().utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// What a Python `script` printed.
    static func python(_ script: String) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }

    static func path(_ h: ServerHarness, _ options: String, _ source: String) -> String {
        let url = h.url(options: options, source: source)
        return url.path(percentEncoded: true)
    }

    @Test func warmAnswersAreTheRespondersAnswers() async throws {
        let h = try await ServerHarness()
        h.origin.route("/a.png", .headers([("cache-control", "max-age=600")], then: .respond(body: Self.png)))
        let cold = try await Curl.get(h.url(options: "w:20", source: "/a.png"))
        let warm = try await Curl.get(h.url(options: "w:20", source: "/a.png"))
        #expect(cold.status == 200 && warm.status == 200 && warm.body == cold.body)
        for name in ["etag", "content-type", "content-length", "server"] { #expect(warm.headers[name] == cold.headers[name], "\(name)") }
        #expect(warm.headers["date"] != nil && warm.headers["cache-control"]?.hasPrefix("public, max-age=") == true)
        let revalidated = try await Curl.get(h.url(options: "w:20", source: "/a.png"), headers: ["If-None-Match": try #require(cold.headers["etag"])])
        #expect(revalidated.status == 304 && revalidated.body.isEmpty)
        // HEAD and other methods go to the responder (405).
        #expect(try await Curl.get(h.url(options: "w:20", source: "/a.png"), method: "POST").status == 405)
        // Counted as the responder counts: 200 from the response cache.
        #expect(h.server.processor.renders.load(ordering: .relaxed) == 1)
        await h.finish()
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let h = try await ServerHarness()
        h.origin.route("/slow.png", .delayed(.milliseconds(400), .respond(body: Self.png)))
        h.origin.route("/fast.png", .respond(body: Self.png))
        let warmPath = Self.path(h, "w:10", "/fast.png"), coldPath = Self.path(h, "w:11", "/slow.png")
        let warm = try await Curl.get(h.url(options: "w:10", source: "/fast.png"))
        let request = { (path: String) in "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }
        // The cold request first, then the warm one: the warm answer waits for the cold one.
        let text = try Self.pipelined(port: h.port, [request(coldPath), request(warmPath), request(warmPath)])
        let etags = text.components(separatedBy: "\r\n").filter { $0.lowercased().hasPrefix("etag:") }
        #expect(etags.count == 3, "\(text.prefix(600))")
        #expect(etags.last.map { $0.hasSuffix(warm.headers["etag"] ?? "-") } == true)
        #expect(etags.first.map { !$0.hasSuffix(warm.headers["etag"] ?? "-") } == true, "the cold answer came first")
        // A warm request that closes its connection is answered and the connection closed.
        let closing = try Self.pipelined(port: h.port, ["GET \(warmPath) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"])
        #expect(closing.hasPrefix("HTTP/1.1 200") && closing.hasSuffix("<closed>"), "\(closing.suffix(40))")
        await h.finish()
    }

    /// A connection kept busy by warm requests alone is not idle: the connection's tracker sees
    /// the requests `WarmResponder` answers (both read HTTP/1's parts, before the conversion).
    @Test func warmRequestsKeepTheirConnectionFromTheIdleSweep() async throws {
        let h = try await ServerHarness { $0.idleTimeoutSeconds = 0.6 }
        h.origin.route("/k.png", .headers([("cache-control", "max-age=600")], then: .respond(body: Self.png)))
        let warmPath = Self.path(h, "w:12", "/k.png")
        _ = try await Curl.get(h.url(options: "w:12", source: "/k.png"))
        // Eight warm requests a quarter of a second apart on one connection: two seconds, over
        // three idle timeouts, and never idle for one.
        let script = """
        import socket, time
        s = socket.create_connection(("127.0.0.1", \(h.port)))
        s.settimeout(2)
        answered = 0
        for i in range(8):
            s.sendall(b"GET \(warmPath) HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
            data = b""
            while b"\\r\\n\\r\\n" not in data:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            if data.startswith(b"HTTP/1.1 200"): answered += 1
            head, _, rest = data.partition(b"\\r\\n\\r\\n")
            length = int([l.split(b":")[1] for l in head.split(b"\\r\\n") if l.lower().startswith(b"content-length")][0])
            while len(rest) < length:
                chunk = s.recv(65536)
                if not chunk: break
                rest += chunk
            time.sleep(0.25)
        print(answered)
        """
        let data = try Self.python(script)
        #expect(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "8")
        #expect(h.server.processor.renders.load(ordering: .relaxed) == 1)
        await h.finish()
    }

    /// A warm answer ends its request for the tracker too: a connection left idle after one is
    /// closed by the idle sweep, as after any other answer. Its head is HTTP/1.1's, with the
    /// responder's status line.
    @Test func aConnectionIdleAfterAWarmAnswerIsSwept() async throws {
        let h = try await ServerHarness { $0.idleTimeoutSeconds = 0.5 }
        h.origin.route("/i.png", .headers([("cache-control", "max-age=600")], then: .respond(body: Self.png)))
        let warmPath = Self.path(h, "w:13", "/i.png")
        let cold = try await Curl.get(h.url(options: "w:13", source: "/i.png"))
        let script = """
        import socket, sys, time
        s = socket.create_connection(("127.0.0.1", \(h.port)))
        s.sendall(b"GET \(warmPath) HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
        s.settimeout(4)
        out = b""; start = time.time()
        while True:
            chunk = s.recv(65536)
            if not chunk: break
            out += chunk
        sys.stdout.buffer.write(out.split(b"\\r\\n\\r\\n")[0] + b"\\n" + str(round(time.time() - start, 1)).encode())
        """
        let data = try Self.python(script)
        let lines = String(decoding: data, as: UTF8.self).components(separatedBy: "\r\n")
        #expect(lines.first == "HTTP/1.1 200 OK", "\(lines)")
        #expect(lines.contains("ETag: \(cold.headers["etag"] ?? "-")") && lines.contains("Content-Length: \(cold.body.count)"))
        // Closed by the sweep (within a second or two), not by the client's four-second timeout.
        let seconds = Double(lines.last?.components(separatedBy: "\n").last ?? "") ?? 99
        #expect(seconds < 3, "\(lines.last ?? "")")
        #expect(h.server.processor.renders.load(ordering: .relaxed) == 1)
        await h.finish()
    }
}

import Foundation
import Testing
import WebImage
@testable import WebImageServer

/// `webimage serve` decodes sources in sandboxed workers (on by default): a decoder that aborts,
/// never ends or is abandoned by its request harms no other request, and the server answers
/// `/health` throughout.
@Suite("Server decoding isolation", .serialized, .timeLimit(.minutes(2)))
struct ServerIsolationTests {
    /// CPU seconds used so far by the processes `pids` (user and system).
    static func cpuSeconds(_ pids: [Int32]) -> Double {
        pids.reduce(0) { total, pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return total }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return total }
            return total + (user + system) / 100
        }
    }

    /// Under a sanitizer (scripts/sanitize.sh runs the ASan and TSan suites at once on two
    /// cores, beside the spinning workers) a request is several times slower: the bounds on
    /// answers and the decode time limits that must outlast them are scaled together.
    static let slowdown: Double = ProcessInfo.processInfo.environment["WEBIMAGE_SANITIZER"] == nil ? 1 : 3

    static func harness(_ change: @escaping (inout ServerConfiguration) -> Void = { _ in }) async throws -> ServerHarness {
        let h = try await ServerHarness { change(&$0) }
        h.origin.route("/abort.svg", .respond(contentType: "image/svg+xml", body: DecodingWorkerPoolTests.abortingSVG))
        h.origin.route("/endless-a.svg", .respond(contentType: "image/svg+xml", body: DecodingWorkerPoolTests.endlessSVG))
        h.origin.route("/endless-b.svg", .respond(contentType: "image/svg+xml", body: DecodingWorkerPoolTests.endlessSVG + Data(" ".utf8)))
        h.origin.route("/photo.png", .respond(body: try Image(bitmap: DecodingWorkerPoolTests.gradient(width: 400, height: 300)).encoded(as: .png)))
        return h
    }

    @Test("The SVG that aborts librsvg is a 422; the server stays up and serves the next request")
    func abortingSource() async throws {
        let h = try await Self.harness()
        let reply = try await Curl.get(h.url(options: "rs:fit:64:64", source: "/abort.svg"))
        #expect(reply.status == 422, "\(String(decoding: reply.body, as: UTF8.self))")
        #expect(try await Curl.get(URL(string: "http://127.0.0.1:\(h.port)/health")!).status == 200)
        #expect(try await Curl.get(h.url(options: "rs:fit:64:64", source: "/photo.png")).status == 200)
        #expect(h.server.decodingWorkers?.restartCount == 1)
        await h.finish()
    }

    @Test("Two never-ending SVGs: /health and a cached result answer within a second, a thumbnail is answered, they get 504s")
    func endlessSources() async throws {
        let h = try await Self.harness { $0.decodeTimeoutSeconds = 3 * Self.slowdown }
        let cached = h.url(options: "rs:fit:32:32", source: "/photo.png")
        #expect(try await Curl.get(cached).status == 200)
        let endless = ["/endless-a.svg", "/endless-b.svg"].map { source in
            Task { try await Curl.get(h.url(options: "rs:fit:64:64", source: source)) }
        }
        try await Task.sleep(for: .milliseconds(500))
        for _ in 0..<3 {
            let start = ContinuousClock.now
            #expect(try await Curl.get(URL(string: "http://127.0.0.1:\(h.port)/health")!).status == 200)
            #expect(ContinuousClock.now - start < .seconds(Self.slowdown))
        }
        // Every worker is busy: a result already made is answered without one.
        let start = ContinuousClock.now
        #expect(try await Curl.get(cached).status == 200)
        #expect(ContinuousClock.now - start < .seconds(Self.slowdown))
        let thumbnail = try await Curl.get(h.url(options: "rs:fit:64:64", source: "/photo.png"))
        #expect(thumbnail.status == 200)
        for task in endless {
            let reply = try await task.value
            #expect(reply.status == 504, "\(String(decoding: reply.body, as: UTF8.self))")
        }
        await h.finish()
    }

    @Test("A request's 504 ends its decode: the workers fall idle within a second")
    func abandonedDecode() async throws {
        // The request's own deadline comes long before the decode's.
        let h = try await Self.harness {
            $0.processingTimeoutSeconds = 1.5
            $0.decodeTimeoutSeconds = 60
        }
        let reply = try await Curl.get(h.url(options: "rs:fit:64:64", source: "/endless-a.svg"))
        #expect(reply.status == 504)
        // The worker that was killed is replaced; the new one's start-up is over by then.
        try await Task.sleep(for: .seconds(Self.slowdown))
        let pids = try #require(h.server.decodingWorkers?.workerProcessIDs)
        let before = Self.cpuSeconds(pids)
        try await Task.sleep(for: .milliseconds(1000))
        #expect(Self.cpuSeconds(pids) - before < 0.2, "the workers kept decoding after the 504")
        #expect(h.server.decodingWorkers?.restartCount == 1)
        await h.finish()
    }

    @Test("Hostile grids and tiles through the server: 422s at once, the server's memory unchanged")
    func hostileContainers() async throws {
        let h = try await Self.harness()
        h.origin.route("/grid.avif", .respond(contentType: "image/avif",
                                              body: DecoderResourceBoundsTests.grid(brand: "avif", codec: "av01", columns: 110, rows: 110, tile: 64)))
        h.origin.route("/grid.heic", .respond(contentType: "image/heic",
                                              body: DecoderResourceBoundsTests.grid(brand: "heic", codec: "hvc1", columns: 100, rows: 100, tile: 64)))
        h.origin.route("/tile.tif", .respond(contentType: "image/tiff", body: DecoderResourceBoundsTests.hugeTileTIFF))
        let before = ServerMemoryTests.peakResidentMegabytes(getpid())
        for source in ["/grid.avif", "/grid.heic", "/tile.tif"] {
            let start = ContinuousClock.now
            let reply = try await Curl.get(h.url(options: "rs:fit:64:64", source: source))
            #expect(reply.status == 422, "\(source): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            #expect(ContinuousClock.now - start < .seconds(2), "\(source)")
        }
        if ProcessInfo.processInfo.environment["WEBIMAGE_SANITIZER"] == nil {
            #expect(ServerMemoryTests.peakResidentMegabytes(getpid()) - before < 100)
        }
        #expect(try await Curl.get(URL(string: "http://127.0.0.1:\(h.port)/health")!).status == 200)
        await h.finish()
    }

    @Test("Isolation can be turned off in the configuration")
    func configuration() throws {
        let text = #"{"isolation": false, "decodingWorkers": 3, "decodingWorkerMemoryMegabytes": 256, "decodeTimeoutSeconds": 2.5}"#
        let configuration = try ServerConfiguration.decode(Data(text.utf8))
        #expect(!configuration.isolation && configuration.decodingWorkers == 3)
        let pool = configuration.decodingWorkerPool
        #expect(pool.workerCount == 3 && pool.memoryLimit == 256 << 20 && pool.timeLimit == .milliseconds(2500))
        #expect(ServerConfiguration().isolation)
    }
}

import Foundation
import NIOCore
import Synchronization
import Testing
@testable import WebImage
@testable import WebImageServer

/// What a result may cost in `webimage serve`: its size, every frame counted, is checked before
/// any of its buffers exists; animations are transformed and encoded a frame at a time; the
/// results being made share one memory budget; the time limit covers decode, transform and encode.
@Suite(.serialized) struct ServerMemoryTests {
    static let png = ManagerHarness.png   // 64x48

    /// A GIF of `frames` one-pixel frames on a `width` x `height` canvas: a few bytes a frame,
    /// a whole canvas each once composited.
    static func sparseGIF(width: Int, height: Int, frames: Int) -> Data {
        var gif = Data("GIF89a".utf8)
        func le16(_ value: Int) { gif.append(UInt8(value & 0xff)); gif.append(UInt8(value >> 8)) }
        le16(width); le16(height)
        gif.append(contentsOf: [0x80, 0, 0])            // a global table of 2 colours
        gif.append(contentsOf: [0, 0, 0, 255, 255, 255])
        gif.append(contentsOf: [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0])
        for index in 0..<frames {
            gif.append(contentsOf: [0x21, 0xF9, 4, 0, 2, 0, 0, 0])   // 20 ms
            gif.append(0x2C); le16(index % width); le16(0); le16(1); le16(1); gif.append(0)
            gif.append(contentsOf: [2, 2, 0x44, 0x01, 0])              // LZW: clear, 0, end
        }
        gif.append(0x3B)
        return gif
    }

    static func peakResidentMegabytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return -1 }
        return kilobytes / 1024
    }

    /// The response cache's budget counts what each result takes in memory: NIO gives a body
    /// the next power of two of its size, so 70,000-byte results take 131,072 bytes each, and a
    /// budget of 1,000,000 bytes keeps 7 of them, not the 14 their bytes alone would allow.
    @Test func theResponseCacheCountsTheMemoryItsResultsTake() {
        let cache = ResponseCache(limit: 1_000_000)
        let body = ByteBuffer(bytes: [UInt8](repeating: 7, count: 70_000))
        #expect(body.capacity == 131_072)
        for index in 0..<14 {
            cache.store(ResponseCache.Entry(body: body, contentType: "image/jpeg", etag: "\"\(index)\"", variesWithAccept: false),
                        forKey: "r\(index)")
        }
        let kept = (0..<14).filter { cache.entry(forKey: "r\($0)") != nil }
        #expect(kept == Array(7..<14))
        // A result over a quarter of the budget in memory (262,144 bytes for 140,000) is not kept.
        let large = ByteBuffer(bytes: [UInt8](repeating: 7, count: 140_000))
        cache.store(ResponseCache.Entry(body: large, contentType: "image/jpeg", etag: "\"l\"", variesWithAccept: false), forKey: "large")
        #expect(cache.entry(forKey: "large") == nil)
    }

    /// A source decoded at a size asked for once takes no room in the memory cache (every
    /// request of a thumbnail service with many sizes); a size asked for again, in another
    /// format, is kept from its second decode. `memoryCacheMinimumUses: 1` keeps every decode,
    /// and 0 is refused when the server starts.
    @Test func aDecodeIsKeptInMemoryFromItsSecondUse() async throws {
        let h = try await ServerHarness()
        h.origin.route("/a.png", .respond(body: Self.png))
        let memory = try #require((h.server.manager.cache as? ImageCache)?.memoryCache)
        for width in [10, 11, 12] {
            #expect(try await Curl.get(h.url(options: "w:\(width)", source: "/a.png")).status == 200)
        }
        #expect(memory.count == 0, "three sizes asked for once each")
        #expect(try await Curl.get(h.url(options: "w:20/f:png", source: "/a.png")).status == 200)
        #expect(memory.count == 0)
        #expect(try await Curl.get(h.url(options: "w:20/f:webp", source: "/a.png")).status == 200)
        #expect(memory.count == 1, "the size's second decode is kept")
        await h.finish()

        let every = try await ServerHarness { $0.memoryCacheMinimumUses = 1 }
        every.origin.route("/a.png", .respond(body: Self.png))
        let kept = try #require((every.server.manager.cache as? ImageCache)?.memoryCache)
        #expect(try await Curl.get(every.url(options: "w:10", source: "/a.png")).status == 200)
        #expect(kept.count == 1)
        await every.finish()

        var configuration = ServerConfiguration()
        configuration.memoryCacheMinimumUses = 0
        #expect(throws: ServerConfigurationError.self) { try ImageServer(configuration: configuration) }
        #expect(try ServerConfiguration.decode(Data(#"{"memoryCacheMinimumUses": 3}"#.utf8)).memoryCacheMinimumUses == 3)
    }

    @Test func theGIFThatTookGigabytesIsRefusedBeforeAnyFrameIsComposited() async throws {
        let bomb = Self.sparseGIF(width: 2000, height: 2000, frames: 300)
        #expect(bomb.count < 8000)
        let h = try await ServerHarness()
        h.origin.route("/bomb.gif", .respond(contentType: "image/gif", body: bomb))
        let start = ContinuousClock.now
        for options in ["f:png", "f:webp", "f:gif", "rot:90", "q:50"] {
            let reply = try await Curl.get(h.url(options: options, source: "/bomb.gif"))
            #expect(reply.status == 422 && String(decoding: reply.body, as: UTF8.self).contains("pixels in all"), "\(options): \(reply.status)")
        }
        #expect(ContinuousClock.now - start < .seconds(5))
        // Its first frame is a still image of 4 megapixels: served.
        #expect(try await Curl.get(h.url(options: "rs:fit:100:100/ff", source: "/bomb.gif")).status == 200)
        await h.finish()
    }

    /// Allowed past the pixel limit and decoded in the process (isolation off: a worker hands
    /// back every frame at once, so there its frames count against the source limit together),
    /// the same animation is encoded a frame at a time (one canvas held, not 300) and cut at the
    /// time limit with a 504; a 10000x10000 source is refused by every operation: the process
    /// stays small.
    @Test func anAllowedBigAnimationStaysWithinOneCanvasAndItsTimeLimit() async throws {
        let origin = TestHTTPServer()
        try await origin.start()
        origin.route("/bomb.gif", .respond(contentType: "image/gif", body: Self.sparseGIF(width: 2000, height: 2000, frames: 300)))
        let directory = TemporaryDirectory("serve-memory")
        defer { directory.remove() }
        let (running, port) = try await ServerConnectionTests.serve(descriptors: 4096, json: """
            , "allowedNetworks": ["127.0.0.1"], "maximumResultMegapixels": 2000, "processingTimeoutSeconds": 3, "isolation": false
            """, directory: directory)
        let pid = running.process.processIdentifier
        let baseline = Self.peakResidentMegabytes(pid)
        var statuses: [Int] = []
        for format in ["png", "webp", "gif"] {
            let start = ContinuousClock.now
            let reply = try await Curl.get(URL(string: "http://127.0.0.1:\(port)/_/f:\(format)/plain/" + origin.url("/bomb.gif").absoluteString)!)
            statuses.append(reply.status)
            #expect(ContinuousClock.now - start < .seconds(6), "f:\(format) answered after \(ContinuousClock.now - start)")
            #expect(reply.status == 200 || reply.status == 504, "f:\(format): \(reply.status)")
        }
        #expect(statuses.contains(504), "the time limit cut no encode: \(statuses)")
        // A source claiming 10000x10000, by every operation: refused from its header.
        origin.route("/huge.png", .respond(body: Fixtures.pngHeader(width: 10_000, height: 10_000)))
        for options in ["q:50", "rs:fit:4096:4096", "rs:fill-crop:4096:4096", "w:1024/dpr:4", "rot:45", "bl:100", "rc:100"] {
            let reply = try await Curl.get(URL(string: "http://127.0.0.1:\(port)/_/\(options)/plain/" + origin.url("/huge.png").absoluteString)!)
            #expect(reply.status == 422, "\(options): \(reply.status)")
        }
        // Not under a sanitizer (scripts/sanitize.sh sets WEBIMAGE_SANITIZER): AddressSanitizer's
        // quarantine keeps freed memory resident, a canvas per frame here.
        if ProcessInfo.processInfo.environment["WEBIMAGE_SANITIZER"] == nil {
            let peak = Self.peakResidentMegabytes(pid)
            #expect(peak > 0 && peak - baseline < 200, "peak resident \(peak) MB (from \(baseline) MB)")
        }
        running.signal(SIGTERM)
        _ = running.wait()
        await origin.stop()
    }

    @Test func everyResultLargerThanTheLimitIsRefusedBeforeItIsMade() async throws {
        let h = try await ServerHarness { $0.maximumDimension = 60 }
        h.origin.route("/a.png", .respond(body: Self.png))   // 64x48: over 60 without a resize
        func status(_ options: String) async throws -> (Int, String) {
            let reply = try await Curl.get(h.url(options: options, source: "/a.png"))
            return (reply.status, String(decoding: reply.body, as: UTF8.self))
        }
        for options in ["q:50", "f:webp", "gs", "rs:fit:60:60/rot:45", "rs:fit:50:50/rot:30", "rs:cover:60:60/rot:90"] {
            let (code, text) = try await status(options)
            #expect(code == 422 && text.contains("larger than 60"), "\(options): \(code) \(text)")
        }
        // The sizes and the device pixel ratio are bounded by the parser (400, nothing fetched).
        for options in ["rs:fit:61:10", "w:30/dpr:3", "bl:1000"] {
            #expect(try await status(options).0 == 400, "\(options)")
        }
        for options in ["rs:fit:40:40", "rs:fit:40:40/rot:90", "rs:fit:30:30/rot:45", "rs:fill:60:40"] {
            let (code, text) = try await status(options)
            #expect(code == 200, "\(options): \(code) \(text)")
        }
        await h.finish()
    }

    /// A source that claims 10000x10000 (a PNG header and nothing else): every operation is
    /// refused from the header, before a pixel is allocated.
    @Test func aTenThousandSquareSourceIsRefusedFromItsHeader() async throws {
        let h = try await ServerHarness()
        h.origin.route("/huge.png", .respond(body: Fixtures.pngHeader(width: 10_000, height: 10_000)))
        h.origin.route("/big.png", .respond(body: Fixtures.pngHeader(width: 5_000, height: 5_000)))
        for options in ["q:50", "f:webp", "rs:fit:100:100", "rs:fill-crop:4096:4096", "rot:45", "bl:100", "w:1000/dpr:4", "rc:50", "info"] {
            let reply = try await Curl.get(h.url(options: options, source: "/huge.png"))
            #expect(reply.status == 422 && String(decoding: reply.body, as: UTF8.self).contains("10000x10000, over"), "\(options): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        // 25 megapixels: within the source limit with a resize, over a result's without one.
        for options in ["q:50", "rot:90"] {
            let reply = try await Curl.get(h.url(options: options, source: "/big.png"))
            #expect(reply.status == 422 && String(decoding: reply.body, as: UTF8.self).contains("5000x5000, over 16777216"), "\(options): \(reply.status)")
        }
        await h.finish()
    }

    @Test func theBudgetGrantsInOrderAndLetsACancelledWaiterGo() async throws {
        let budget = ProcessingBudget(capacity: 100)
        try await budget.reserve(60)
        #expect(budget.available == 40)
        final class Order: Sendable { let values = Mutex<[Int]>([]) }
        let order = Order()
        let second = Task { try await budget.reserve(50); order.values.withLock { $0.append(2) } }
        try await Task.sleep(for: .milliseconds(20))
        let third = Task { try await budget.reserve(30); order.values.withLock { $0.append(3) } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(order.values.withLock { $0 }.isEmpty, "the 30 waits behind the 50 although it would fit")
        let cancelled = Task { try await budget.reserve(100) }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        budget.release(60)
        try await second.value
        try await third.value
        // Both granted by the one release; their tasks then run in either order (two threads),
        // so the order the grants were made in is what the wait above showed, not this list's.
        #expect(order.values.withLock { $0 }.sorted() == [2, 3])
        #expect(budget.available == 20)
        budget.release(50)
        budget.release(30)
        #expect(budget.available == 100)
        // More than the whole budget runs alone.
        try await budget.reserve(1_000)
        #expect(budget.available == 0)
        budget.release(1_000)
        #expect(budget.available == 100)
    }
}

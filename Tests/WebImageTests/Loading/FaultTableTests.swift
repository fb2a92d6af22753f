import Foundation
import Testing
@testable import WebImage

/// Every misbehaving server of the fault table, through a whole manager: each load ends with
/// its typed error within a bounded time, leaves no transfer running and writes nothing into
/// the cache.
@Suite(.serialized) struct FaultTableTests {
    /// What a load against a fault must end with.
    enum Expected: Sendable {
        case timedOut, tooLargeResponse, network, decodingFailed, imageTooLarge
    }

    /// One row of the table: its reply script and the error it must give.
    struct Fault: Sendable, CustomTestStringConvertible {
        let name: String
        let steps: [FaultServer.Step]
        let expected: Expected
        /// The load's ceiling, generous over the configured timeouts (1 s of silence, 2 s in all).
        var bound: Duration = .seconds(4)
        var testDescription: String { name }
    }

    static let png = try! Corpus.data("png/basn6a08.png")
    static let pngHead = FaultServer.head([("Content-Type", "image/png"), ("Content-Length", "\(png.count)")])

    static func image(_ body: Data, type: String = "image/png") -> [FaultServer.Step] {
        [.send(FaultServer.head([("Content-Type", type), ("Content-Length", "\(body.count)")]) + body), .close]
    }

    static func chunk(_ bytes: Data) -> Data { Data(String(bytes.count, radix: 16).utf8) + Data("\r\n".utf8) + bytes + Data("\r\n".utf8) }

    /// 256 MB of zeros gzip-compressed (about 250 KB): made once with the system's gzip.
    static let gzipBomb: Data = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "head -c 268435456 /dev/zero | gzip -1 -c"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try! process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }()

    /// A JPEG whose frame header claims 65500 x 65500 (the format's sides are 16-bit).
    static let hugeJPEG: Data = {
        var data = try! Image(bitmap: Fixtures.gradient(width: 16, height: 16, opaque: true)).encoded(as: .jpeg)
        let sof = data.firstRange(of: Data([0xFF, 0xC0]))!.lowerBound
        data.replaceSubrange(sof + 5..<sof + 9, with: [0xFF, 0xDC, 0xFF, 0xDC])
        return data
    }()

    /// A GIF whose screen and frame claim 65535 x 65535.
    static let hugeGIF = Data([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0,
                               0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0x02, 0x02, 0x4C, 0x01, 0x00, 0x3B])

    /// An animated WebP whose canvas is `side` x `side` (a still's sides stop at 16384), with one
    /// 4 x 4 frame.
    static func hugeWebP(side: UInt32) -> Data {
        func le(_ value: UInt32, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func chunk(_ fourcc: String, _ payload: Data) -> Data {
            Data(fourcc.utf8) + Data(le(UInt32(payload.count), 4)) + payload + (payload.count % 2 == 1 ? Data([0]) : Data())
        }
        let still = try! Image(bitmap: Fixtures.gradient(width: 4, height: 4, opaque: true)).encoded(as: .webp)
        let frame = Data(still.dropFirst(12))   // the one image chunk after RIFF....WEBP
        var body = Data("WEBP".utf8)
        body += chunk("VP8X", Data([0x02, 0, 0, 0] + le(side - 1, 3) + le(side - 1, 3)))
        body += chunk("ANIM", Data(le(0, 4) + le(0, 2)))
        body += chunk("ANMF", Data(le(0, 3) + le(0, 3) + le(3, 3) + le(3, 3) + le(100, 3) + [0]) + frame)
        return Data("RIFF".utf8) + Data(le(UInt32(body.count), 4)) + body
    }

    static let faults: [Fault] = [
        Fault(name: "accepts and never answers", steps: [.wait(.seconds(30))], expected: .timedOut),
        Fault(name: "headers, then a stall", steps: [.send(pngHead), .wait(.seconds(30))], expected: .timedOut),
        Fault(name: "2 GB Content-Length, short body", steps: [
            .send(FaultServer.head([("Content-Type", "image/png"), ("Content-Length", "2147483648")]) + png), .close,
        ], expected: .tooLargeResponse),
        Fault(name: "chunked body that never ends, fast", steps: [
            .send(FaultServer.head([("Content-Type", "image/png"), ("Transfer-Encoding", "chunked")]) + chunk(png)),
            .repeating(chunk(Data(repeating: 7, count: 256 << 10)), every: .zero, count: nil),
        ], expected: .tooLargeResponse),
        Fault(name: "chunked body that never ends, slow", steps: [
            .send(FaultServer.head([("Content-Type", "image/png"), ("Transfer-Encoding", "chunked")])),
            .repeating(chunk(Data(repeating: 7, count: 10)), every: .milliseconds(100), count: nil),
        ], expected: .timedOut),
        Fault(name: "1 byte a second", steps: [.send(pngHead), .repeating(Data([0x89]), every: .seconds(1), count: nil)],
              expected: .timedOut),
        Fault(name: "redirect loop", steps: [.send(FaultServer.head(status: 302, [("Location", "/fault"), ("Content-Length", "0")]))],
              expected: .network),
        Fault(name: "10 MB of garbage labelled image/png", steps: image({
            var generator = SeededGenerator(seed: 18)
            return Data((0..<(10 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }()), expected: .decodingFailed),
        Fault(name: "gzip bomb", steps: [
            .send(FaultServer.head([("Content-Type", "image/png"), ("Content-Encoding", "gzip"),
                                    ("Content-Length", "\(gzipBomb.count)")]) + gzipBomb), .close,
        ], expected: .tooLargeResponse),
        Fault(name: "PNG claiming 100000 x 100000", steps: image(Fixtures.pngHeader(width: 100_000, height: 100_000)),
              expected: .imageTooLarge),
        Fault(name: "JPEG claiming 65500 x 65500", steps: image(hugeJPEG, type: "image/jpeg"), expected: .imageTooLarge),
        Fault(name: "GIF claiming 65535 x 65535", steps: image(hugeGIF, type: "image/gif"), expected: .imageTooLarge),
        Fault(name: "WebP claiming 65535 x 65535", steps: image(hugeWebP(side: 65535), type: "image/webp"), expected: .imageTooLarge),
        // libwebp refuses a canvas of 2^32 pixels or more as malformed.
        Fault(name: "WebP claiming 100000 x 100000", steps: image(hugeWebP(side: 100_000), type: "image/webp"),
              expected: .decodingFailed),
        Fault(name: "PNG truncated", steps: image(png.prefix(png.count / 2)), expected: .decodingFailed),
        Fault(name: "JPEG truncated", steps: image(ManagerHarness.jpeg.prefix(ManagerHarness.jpeg.count / 2), type: "image/jpeg"),
              expected: .decodingFailed),
        Fault(name: "GIF truncated", steps: image(ManagerHarness.gif.prefix(ManagerHarness.gif.count / 2), type: "image/gif"),
              expected: .decodingFailed),
        Fault(name: "WebP truncated", steps: image({
            let webp = try! Corpus.data("webp/1.webp")
            return webp.prefix(webp.count / 2)
        }(), type: "image/webp"), expected: .decodingFailed),
        Fault(name: "Content-Length shorter than the body", steps: [
            .send(FaultServer.head([("Content-Type", "image/png"), ("Content-Length", "\(png.count / 2)")]) + png), .close,
        ], expected: .decodingFailed),
        Fault(name: "Content-Length longer than the body", steps: [
            .send(FaultServer.head([("Content-Type", "image/png"), ("Content-Length", "\(png.count * 2)")]) + png), .close,
        ], expected: .network),
        Fault(name: "reset mid-body", steps: [.send(pngHead + png.prefix(png.count / 2)), .wait(.milliseconds(50)), .reset],
              expected: .network),
        Fault(name: "non-HTTP reply", steps: [.send(Data("SSH-2.0-OpenSSH_9.2\r\n".utf8)), .close], expected: .network),
        Fault(name: "non-HTTP reply, then silence", steps: [.send(Data("220 mail.example ESMTP\r\n".utf8)), .wait(.seconds(30))],
              expected: .network),
    ]

    @Test(arguments: faults) func faultEndsTypedPromptlyAndLeavesNothing(_ fault: Fault) async throws {
        var loaderConfiguration = HTTPImageLoader.Configuration()
        loaderConfiguration.timeout = .seconds(1)
        loaderConfiguration.totalTimeoutFactor = 2
        let harness = try await ManagerHarness(loaderConfiguration: loaderConfiguration)
        let server = FaultServer()
        try await server.start()
        server.script("/fault", fault.steps)

        let clock = ContinuousClock()
        let start = clock.now
        var failure: (any Error)?
        do {
            let image = try await harness.manager.image(for: server.url("/fault"))
            Issue.record("\(fault.name): loaded a \(image.width) x \(image.height) image")
        } catch { failure = error }
        let elapsed = clock.now - start
        #expect(elapsed < fault.bound, "\(fault.name) took \(elapsed)")

        let error = try #require(failure as? ImageError, "\(fault.name): \(String(describing: failure))")
        switch (fault.expected, error) {
        case (.timedOut, .timedOut), (.tooLargeResponse, .responseTooLarge), (.network, .network): break
        case (.imageTooLarge, _) where { if case .tooLarge = error.decodeFailure { true } else { false } }(): break
        case (.decodingFailed, .decodingFailed): break
        default: Issue.record("\(fault.name): expected \(fault.expected), got \(error)")
        }
        #expect(!error.localizedDescription.isEmpty)

        // No transfer left, and nothing in the cache's folder (no entry, no temporary file).
        for _ in 0..<100 where harness.loader.liveTransferCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(harness.loader.liveTransferCount == 0, "\(fault.name)")
        await harness.manager.waitForPendingStores()
        #expect(Self.files(under: harness.directory.url) == [], "\(fault.name)")
        await server.stop()
        await harness.finish()
    }

    /// Regular files anywhere under `root`.
    static func files(under root: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        return (enumerator?.allObjects as? [URL] ?? []).filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }.map(\.lastPathComponent)
    }
}

import Foundation
import Testing
import WebImage
import WebImageIsolation

/// Decoding in sandboxed worker processes: the `webimage` executable built beside the tests is
/// the worker (its `main` calls `DecodingWorker.runIfRequested()`); test doubles are shell
/// processes that crash, hang or write garbage on the worker's socket.
@Suite("Decoding worker pool", .serialized, .timeLimit(.minutes(2)))
struct DecodingWorkerPoolTests {
    static var webimage: String? { CLIRunner.executable?.path }

    static func pool(_ change: (inout DecodingWorkerPool.Configuration) -> Void = { _ in }) throws -> DecodingWorkerPool {
        var configuration = DecodingWorkerPool.Configuration()
        // A worker built with a sanitizer (scripts/sanitize.sh) meets its memory limit as a
        // failed allocation, as an ordinary build does, instead of a report that fails the run.
        for variable in ["ASAN_OPTIONS", "TSAN_OPTIONS"] {
            if let options = ProcessInfo.processInfo.environment[variable] {
                configuration.environment[variable] = options + ":allocator_may_return_null=1"
            }
        }
        configuration.workerCount = 1
        configuration.executable = try #require(webimage, "the webimage executable is built beside the tests")
        change(&configuration)
        return DecodingWorkerPool(configuration: configuration)
    }

    /// An SVG that librsvg 2.54 aborts on (a panic that cannot unwind through C).
    static let abortingSVG: Data = {
        let values = Array(repeating: "1", count: 900).joined(separator: " ")
        return Data("""
            <svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><filter id="f"><feConvolveMatrix order="30" \
            kernelMatrix="\(values)"/></filter><rect width="64" height="64" fill="red" filter="url(#f)"/></svg>
            """.utf8)
    }()

    /// An SVG whose filter never finishes.
    static let endlessSVG = Data("""
        <svg xmlns="http://www.w3.org/2000/svg" width="512" height="512"><filter id="t"><feTurbulence baseFrequency="0.01" \
        numOctaves="1000000000"/></filter><rect width="512" height="512" filter="url(#t)"/></svg>
        """.utf8)

    static func gradient(width: Int, height: Int) -> Bitmap {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height { for x in 0..<width { bytes[(y * width + x) * 4] = UInt8(x & 255); bytes[(y * width + x) * 4 + 1] = UInt8(y & 255) } }
        return Bitmap(width: width, height: height, rgba: bytes)
    }

    @Test("A worker decodes what this process decodes, pixel for pixel, with its size options")
    func decodesAsInProcess() async throws {
        let pool = try Self.pool()
        defer { pool.shutdown() }
        let png = try Image(bitmap: Self.gradient(width: 300, height: 200)).encoded(as: .png)
        let local = try ImageCoders.shared.decode(png)
        let isolated = try await pool.decode(png, options: ImageDecodingOptions())
        #expect(isolated.width == 300 && isolated.height == 200 && isolated.format == .png)
        #expect(isolated.bitmap == local.bitmap)
        let small = try await pool.decode(png, options: ImageDecodingOptions(maxPixelSize: 60))
        #expect(small.width == 60 && small.height == 40)
        let refused = await #expect(throws: ImageError.self) { try await pool.decode(png, options: ImageDecodingOptions(pixelLimit: 1000)) }
        #expect(refused == .tooLarge(width: 300, height: 200, limit: 1000))
        await #expect(throws: ImageError.unsupportedFormat(.unknown)) { try await pool.decode(Data("not an image".utf8), options: .init()) }
    }

    /// The pool writes each request's data into one file per worker, grown for a large source
    /// and shrunk back after it; the worker keeps that file mapped between requests. Each
    /// decode of a run through one worker (the same size with new bytes, a grown file, a
    /// shrunk one) sees its own data.
    @Test("One worker decodes a run of sources of changing sizes as this process does")
    func aRunOfSourcesThroughOneWorker() async throws {
        let pool = try Self.pool()
        defer { pool.shutdown() }
        var state: UInt32 = 12345
        let noise = (0..<(1700 * 1300 * 4)).map { _ -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        let large = try Image(bitmap: Bitmap(width: 1700, height: 1300, rgba: noise)).encoded(as: .png)
        #expect(large.count > 8 << 20, "larger than the file the pool keeps between decodes")
        let wide = try Image(bitmap: Self.gradient(width: 300, height: 200)).encoded(as: .png)
        let tall = try Image(bitmap: Self.gradient(width: 200, height: 300)).encoded(as: .jpeg)
        for (index, data) in [wide, tall, large, wide, tall, tall].enumerated() {
            let local = try ImageCoders.shared.decode(data)
            let isolated = try await pool.decode(data, options: ImageDecodingOptions())
            #expect(isolated.bitmap == local.bitmap, "source \(index): \(data.count) bytes")
        }
        #expect(pool.workerProcessIDs.count == 1)
    }

    @Test("An animation comes back with every frame, its durations and its loop count")
    func animation() async throws {
        let pool = try Self.pool()
        defer { pool.shutdown() }
        let frames = (0..<3).map { index in
            ImageFrame(bitmap: Bitmap(width: 8, height: 8, rgba: [UInt8](repeating: UInt8(index * 80), count: 256)), duration: 0.1 * Double(index + 1))
        }
        let gif = try Image(frames: frames, loopCount: 2).encoded(as: .gif)
        let local = try ImageCoders.shared.decode(gif)
        let isolated = try await pool.decode(gif, options: ImageDecodingOptions())
        #expect(isolated.frameCount == 3 && isolated.loopCount == 2)
        #expect(isolated.frameDurations == local.frameDurations)
        #expect(try isolated.allFrames().map(\.bitmap) == local.allFrames().map(\.bitmap))
        let first = try await pool.decode(gif, options: ImageDecodingOptions(firstFrameOnly: true))
        #expect(first.frameCount == 1)
    }

    @Test("A worker runs locked down: seccomp filter, no new privileges")
    func lockedDown() async throws {
        let pool = try Self.pool()
        defer { pool.shutdown() }
        // The first decode waits for the worker's start-up, after which it is locked down.
        _ = try await pool.decode(try Image(bitmap: Self.gradient(width: 4, height: 4)).encoded(as: .png), options: .init())
        let pid = try #require(pool.workerProcessIDs.first)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        #expect(status.contains("NoNewPrivs:\t1"))
        #expect(status.contains("Seccomp:\t2"))
    }

    @Test("The aborting SVG ends its worker only: a typed error, then a fresh worker decodes")
    func abortingDecoder() async throws {
        let pool = try Self.pool()
        defer { pool.shutdown() }
        let error = await #expect(throws: ImageError.self) { try await pool.decode(Self.abortingSVG, options: .init()) }
        guard case .undecodable(.svg, let reason) = error else { Issue.record("unexpected \(String(describing: error))"); return }
        #expect(reason.contains("signal"))
        #expect(pool.restartCount == 1)
        let png = try Image(bitmap: Self.gradient(width: 16, height: 16)).encoded(as: .png)
        #expect(try await pool.decode(png, options: .init()).width == 16)
    }

    @Test("A decode past its time limit is killed: decodeTimedOut, and the pool decodes again")
    func timeLimit() async throws {
        let pool = try Self.pool { $0.timeLimit = .seconds(1) }
        defer { pool.shutdown() }
        let start = ContinuousClock.now
        await #expect(throws: ImageError.decodeTimedOut(seconds: 1)) { try await pool.decode(Self.endlessSVG, options: .init()) }
        #expect(ContinuousClock.now - start < .seconds(5))
        let png = try Image(bitmap: Self.gradient(width: 16, height: 16)).encoded(as: .png)
        #expect(try await pool.decode(png, options: .init()).width == 16)
    }

    @Test("A cancelled call kills its decode at once")
    func cancellation() async throws {
        let pool = try Self.pool { $0.timeLimit = .seconds(60) }
        defer { pool.shutdown() }
        _ = try await pool.decode(try Image(bitmap: Self.gradient(width: 4, height: 4)).encoded(as: .png), options: .init())
        let pid = try #require(pool.workerProcessIDs.first)
        let task = Task { try await pool.decode(Self.endlessSVG, options: .init()) }
        try await Task.sleep(for: .milliseconds(300))
        let start = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ContinuousClock.now - start < .seconds(1))
        // The worker that ran it is gone (reaped), not spinning on.
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(pid)"))
        let png = try Image(bitmap: Self.gradient(width: 16, height: 16)).encoded(as: .png)
        #expect(try await pool.decode(png, options: .init()).width == 16)
    }

    @Test("All workers busy for their whole time limit: the next decodes queue, then run")
    func exhaustedPool() async throws {
        let pool = try Self.pool { $0.timeLimit = .seconds(1) }
        defer { pool.shutdown() }
        let png = try Image(bitmap: Self.gradient(width: 16, height: 16)).encoded(as: .png)
        let endless = (0..<2).map { _ in Task { try await pool.decode(Self.endlessSVG, options: .init()) } }
        try await Task.sleep(for: .milliseconds(100))
        let third = Task { try await pool.decode(png, options: .init()) }
        for task in endless {
            await #expect(throws: ImageError.decodeTimedOut(seconds: 1)) { try await task.value }
        }
        #expect(try await third.value.width == 16)
    }

    @Test("kill -9 of a busy worker fails its call with a typed error")
    func killedWorker() async throws {
        let pool = try Self.pool { $0.timeLimit = .seconds(60) }
        defer { pool.shutdown() }
        _ = try await pool.decode(try Image(bitmap: Self.gradient(width: 4, height: 4)).encoded(as: .png), options: .init())
        let pid = try #require(pool.workerProcessIDs.first)
        let task = Task { try await pool.decode(Self.endlessSVG, options: .init()) }
        try await Task.sleep(for: .milliseconds(300))
        kill(pid, SIGKILL)
        let error = await #expect(throws: ImageError.self) { try await task.value }
        guard case .undecodable(.svg, let reason) = error else { Issue.record("unexpected \(String(describing: error))"); return }
        #expect(reason.contains("signal 9"))
        let png = try Image(bitmap: Self.gradient(width: 16, height: 16)).encoded(as: .png)
        #expect(try await pool.decode(png, options: .init()).width == 16)
    }

    @Test("A worker over its memory limit fails its decode, not the pool")
    func memoryLimit() async throws {
        let pool = try Self.pool { $0.memoryLimit = 48 << 20 }
        defer { pool.shutdown() }
        // 5000 x 5000 RGBA is 100 MB: within the pixel limit, over the worker's memory.
        let big = try Image(bitmap: Bitmap(width: 5000, height: 5000)).encoded(as: .png)
        await #expect(throws: ImageError.self) { try await pool.decode(big, options: .init()) }
        let png = try Image(bitmap: Self.gradient(width: 16, height: 16)).encoded(as: .png)
        #expect(try await pool.decode(png, options: .init()).width == 16)
    }

    @Test("A 1 MB SVG of one <text> element (gigabytes in a process) ends within its worker's bounds")
    func hugeText() async throws {
        let pool = try Self.pool {
            $0.memoryLimit = 256 << 20
            $0.timeLimit = .seconds(5)
        }
        defer { pool.shutdown() }
        let words = String(repeating: "lorem ipsum dolor sit amet ", count: 1_000_000 / 27)
        let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><text x="0" y="20" font-size="16">"#.utf8
                       + Data(words.utf8) + Data("</text></svg>".utf8))
        let start = ContinuousClock.now
        do { _ = try await pool.decode(svg, options: ImageDecodingOptions(maxPixelSize: 64)) } catch {
            #expect(error is ImageError, "\(error)")
        }
        #expect(ContinuousClock.now - start < .seconds(8))
        let png = try Image(bitmap: Self.gradient(width: 16, height: 16)).encoded(as: .png)
        #expect(try await pool.decode(png, options: .init()).width == 16)
    }

    @Test("A program that does not become a worker fails its decodes with a typed error within its start-up time")
    func notAWorker() async throws {
        var configuration = DecodingWorkerPool.Configuration()
        configuration.workerCount = 1
        configuration.startTimeout = .seconds(2)
        configuration.executable = "/bin/sleep"
        configuration.arguments = ["30"]
        let pool = DecodingWorkerPool(configuration: configuration)
        defer { pool.shutdown() }
        let error = await #expect(throws: ImageError.self) { try await pool.decode(Data([0x89, 0x50, 0x4E, 0x47]), options: .init()) }
        guard case .undecodable(_, let reason) = error else { Issue.record("unexpected \(String(describing: error))"); return }
        #expect(reason.contains("did not start as a decoding worker"), "\(reason)")
    }

    @Test("Workers that crash, hang or write garbage: typed errors", arguments: [
        ("kill -SEGV $$", "signal 11"),
        ("printf 'garbage that is not a reply' >&3; sleep 30", "malformed"),
        ("exit 7", "status 7"),
    ])
    func misbehavingWorkers(script: String, expected: String) async throws {
        var configuration = DecodingWorkerPool.Configuration()
        configuration.workerCount = 1
        configuration.timeLimit = .seconds(5)
        configuration.executable = "/bin/sh"
        configuration.arguments = ["-c", "printf YDIW >&3; dd bs=4096 count=1 <&3 >/dev/null 2>&1; " + script]
        let pool = DecodingWorkerPool(configuration: configuration)
        defer { pool.shutdown() }
        let error = await #expect(throws: ImageError.self) { try await pool.decode(Data([0x89, 0x50, 0x4E, 0x47]), options: .init()) }
        guard case .undecodable(_, let reason) = error else { Issue.record("unexpected \(String(describing: error))"); return }
        #expect(reason.contains(expected), "\(reason)")
    }

    /// A worker's anonymous memory in kilobytes (smaps_rollup).
    static func anonymousKilobytes(_ pid: Int32) throws -> Int {
        let rollup = try String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)
        let line = try #require(rollup.split(separator: "\n").first { $0.hasPrefix("Anonymous:") })
        return try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
    }

    /// glibc by default raises its mmap and trim thresholds to the largest block freed, so a
    /// worker that once decoded a large image kept that much resident between decodes: it fixes
    /// them at 16 MiB, and the 24 MB a 3000x2000 image takes goes back after each decode.
    /// (Not under a sanitizer, whose allocator is its own.)
    @Test("A worker gives back what a large decode took",
          .enabled(if: ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil
                       && ProcessInfo.processInfo.environment["TSAN_OPTIONS"] == nil))
    func largeDecodeMemoryIsReturned() async throws {
        let pool = try Self.pool()
        defer { pool.shutdown() }
        _ = try await pool.decode(try Image(bitmap: Self.gradient(width: 4, height: 4)).encoded(as: .png), options: .init())
        let pid = try #require(pool.workerProcessIDs.first)
        let before = try Self.anonymousKilobytes(pid)
        let large = try Image(bitmap: Self.gradient(width: 3000, height: 2000)).encoded(as: .jpeg)
        for _ in 0..<3 {
            let image = try await pool.decode(large, options: .init())
            #expect(image.width == 3000 && image.height == 2000)
        }
        let after = try Self.anonymousKilobytes(pid)
        #expect(after - before < 8 * 1024, "\(before) KB before, \(after) KB after")
    }
}

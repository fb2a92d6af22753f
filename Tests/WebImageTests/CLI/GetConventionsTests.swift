import Foundation
import Testing
@testable import WebImage

/// `webimage get` with the conventions curl and ImageMagick users bring: `-o FILE`, `-O`,
/// `--output-dir`, `--resize` that fits within the box, `--format`, `--max-time`, exit codes,
/// signals and messages.
@Suite(.serialized) struct GetConventionsTests {
    let directory = TemporaryDirectory()
    var environment: [String: String] { ["XDG_CACHE_HOME": directory.url.appendingPathComponent("xdg").path] }

    /// A 3:2 PNG (300x200).
    static let wide = try! Image(bitmap: Fixtures.gradient(width: 300, height: 200, opaque: true)).encoded(as: .png)

    /// 31 frames of 100 ms (some identical to the one before).
    static let animation = try! Data(contentsOf: Corpus.directory.appendingPathComponent("gif/chi.gif"))

    func withServer(_ body: (TestHTTPServer) async throws -> Void) async throws {
        let server = TestHTTPServer()
        try await server.start()
        server.route("/photo.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))
        server.route("/wide.png", .respond(body: Self.wide))
        server.route("/anim.gif", .respond(contentType: "image/gif", body: Self.animation))
        server.route("/stall.jpg", .stallAfter(bytes: 1000, body: ManagerHarness.jpeg))
        do { try await body(server) } catch { await server.stop(); throw error }
        await server.stop()
    }

    func run(_ arguments: [String], in folder: URL? = nil) throws -> CLIRunner.Output {
        try CLIRunner.run(arguments, environment: environment, directory: folder)
    }

    func folder(_ name: String) throws -> URL {
        let url = directory.url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func dashOWritesThatFileInTheFormatOfItsExtension() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let out = try folder("out")
            let file = out.appendingPathComponent("picture.webp")
            let result = try run(["get", server.url("/photo.jpg").absoluteString, "-o", file.path, "--no-cache"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try Image(contentsOf: file).format == .webp)
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["picture.webp"], "no temporary file is left")
            // An unknown extension keeps the downloaded bytes, as curl does.
            let raw = out.appendingPathComponent("download.bin")
            #expect(try run(["get", server.url("/photo.jpg").absoluteString, "-o", raw.path]).status == 0)
            #expect(try Data(contentsOf: raw) == ManagerHarness.jpeg)
            // --format wins over the extension.
            let forced = out.appendingPathComponent("forced.png")
            #expect(try run(["get", server.url("/photo.jpg").absoluteString, "-o", forced.path, "--format", "jpg"]).status == 0)
            #expect(try Image(contentsOf: forced).format == .jpeg)
            // -o - writes the image to standard output and nothing else.
            let piped = try run(["get", server.url("/photo.jpg").absoluteString, "-o", "-"])
            #expect(piped.status == 0 && piped.stdoutData == ManagerHarness.jpeg, "\(piped.stderr)")
        }
    }

    @Test func severalURLsNeedAFolder() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let out = try folder("out")
            let urls = [server.url("/photo.jpg").absoluteString, server.url("/wide.png").absoluteString]
            let refused = try run(["get"] + urls + ["-o", out.appendingPathComponent("one.png").path])
            #expect(refused.status == 2 && refused.stderr.contains("names one file"), "\(refused.stderr)")
            #expect(server.requestCount("/photo.jpg") == 0)
            // An existing folder after -o keeps the names (as before).
            #expect(try run(["get"] + urls + ["-o", out.path]).status == 0)
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out.path)) == ["photo.jpg", "wide.png"])
            // --output-dir creates the folder, parents included.
            let nested = directory.url.appendingPathComponent("a/b/c")
            let created = try run(["get"] + urls + ["--output-dir", nested.path])
            #expect(created.status == 0, "\(created.stderr)")
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: nested.path)) == ["photo.jpg", "wide.png"])
            // -O keeps the names in the current folder.
            let here = try folder("here")
            let remote = try run(["get", "-O"] + urls, in: here)
            #expect(remote.status == 0, "\(remote.stderr)")
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: here.path)) == ["photo.jpg", "wide.png"])
        }
    }

    @Test func resizeFitsWithinTheBoxByDefault() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let out = try folder("out")
            let url = server.url("/wide.png").absoluteString
            let cases: [([String], Int, Int)] = [
                (["--resize", "150x150"], 150, 100),          // within: 3:2 stays 3:2, no padding
                (["--resize", "120x40"], 60, 40),
                (["--resize", "150"], 150, 100),              // the width alone
                (["--resize", "x50"], 75, 50),                // the height alone
                (["--resize", "600x600"], 600, 400),          // enlarges, as ImageMagick's WxH
                (["--resize", "100x100", "--mode", "fill"], 100, 100),
                (["--resize", "100x100", "--mode", "fillcrop"], 100, 100),
                (["--resize", "100x100", "--mode", "pad"], 100, 100),
            ]
            for (index, (arguments, width, height)) in cases.enumerated() {
                let file = out.appendingPathComponent("r\(index).png")
                let result = try run(["get", url, "-o", file.path] + arguments)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
                let image = try Image(contentsOf: file)
                #expect(image.width == width && image.height == height, "\(arguments): \(image.width)x\(image.height)")
            }
            // Padding is transparent; fit and fillcrop have none.
            let padded = try Image(contentsOf: out.appendingPathComponent("r7.png"))
            #expect(padded.bitmap[50, 2].a == 0 && padded.bitmap[50, 50].a == 255)
            #expect(try Image(contentsOf: out.appendingPathComponent("r6.png")).bitmap[50, 2].a == 255)
            let errors: [(String, String)] = [
                ("100000", "100000 is over the 16384 limit"), ("320x100000", "100000 is over the 16384 limit"),
                ("big", "'big' is not a whole number"), ("0x10", "0 must be at least 1"), ("x", "is not a size"),
                ("1x2x3", "is not a size"),
            ]
            for (value, message) in errors {
                let result = try run(["get", url, "--resize", value])
                #expect(result.status == 2 && result.stderr.contains(message), "\(value): \(result.stderr)")
            }
        }
    }

    @Test func formatsIncludeGIFAndAnimationsKeepTheirFramesWhereTheFormatCan() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let out = try folder("out")
            let url = server.url("/anim.gif").absoluteString
            for format in ["gif", "webp"] {
                let file = out.appendingPathComponent("anim.\(format)")
                let result = try run(["get", url, "-o", file.path, "--resize", "16x16"])
                #expect(result.status == 0 && !result.stderr.contains("first of"), "\(result.stderr)")
                let image = try Image(contentsOf: file)
                #expect(image.width == 16 && image.height == 12, "every frame resized")
                // GIF keeps each frame; libwebp's animation encoder folds a frame identical to the
                // one before into its duration: the animation lasts as long either way.
                #expect(format == "gif" ? image.frameCount == 31 : image.frameCount > 1, "\(format): \(image.frameCount) frames")
                #expect(abs(image.frameDurations.reduce(0, +) - 3.1) < 0.001, "\(format): \(image.frameDurations)")
            }
            let still = try run(["get", url, "-o", out.appendingPathComponent("anim.jpg").path])
            #expect(still.status == 0)
            #expect(still.stderr.contains("JPEG holds one frame: wrote the first of 31 frames"), "\(still.stderr)")
            #expect(try run(["get", url, "--format", "bmp"]).status == 2)
        }
    }

    @Test func maxTimeIsATotalDeadlinePerURL() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let out = try folder("out")
            let start = ContinuousClock.now
            let result = try run(["get", server.url("/stall.jpg").absoluteString, server.url("/photo.jpg").absoluteString,
                                  "--output-dir", out.path, "--max-time", "1", "--no-cache"])
            #expect(ContinuousClock.now - start < .seconds(8))
            #expect(result.status == 1)
            #expect(result.stderr.contains("\(server.url("/stall.jpg").absoluteString) timed out after 1 s"), "\(result.stderr)")
            let written = try FileManager.default.contentsOfDirectory(atPath: out.path)
            #expect(written == ["photo.jpg"], "the other URL is unaffected: \(written) \(result.stderr)")
            #expect(try run(["get", "x", "--max-time", "0"]).status == 2)
        }
    }

    @Test func retriesTryATransientFailureAgain() async throws {
        defer { directory.remove() }
        try await withServer { server in
            for path in ["/busy1.jpg", "/busy2.jpg"] {
                server.route(path, .sequence([.headers([("retry-after", "0")], then: .respond(status: 503, body: Data())),
                                              .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg)]))
            }
            let out = try folder("out")
            let once = try run(["get", server.url("/busy1.jpg").absoluteString, "-o", out.appendingPathComponent("a.jpg").path, "--no-cache"])
            #expect(once.status == 1 && server.requestCount("/busy1.jpg") == 1, "\(once.stderr)")
            let retried = try run(["get", server.url("/busy2.jpg").absoluteString, "-o", out.appendingPathComponent("b.jpg").path,
                                   "--no-cache", "--retries", "2"])
            #expect(retried.status == 0, "\(retried.stderr)")
            #expect(server.requestCount("/busy2.jpg") == 2)
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("b.jpg").path))
            #expect(try run(["get", "x", "--retries", "-1"]).status == 2)
        }
    }

    @Test func verbosePrintsTheTransfersMetrics() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let out = try folder("out")
            let url = server.url("/photo.jpg").absoluteString
            let result = try run(["get", url, "-o", out.appendingPathComponent("p.jpg").path, "--no-cache", "--verbose"])
            #expect(result.status == 0, "\(result.stderr)")
            let output = result.stdout + result.stderr
            let line = output.split(separator: "\n").first { $0.contains("queued ") && $0.contains("first byte") }
            #expect(line?.contains("new connection") == true && line?.contains("HTTP/1.") == true, "\(output)")
            let quiet = try run(["get", url, "-o", out.appendingPathComponent("q.jpg").path, "--no-cache"])
            #expect(!(quiet.stdout + quiet.stderr).contains("first byte"))
        }
    }

    @Test func runtimeFailuresExitOneWithoutAUsageBanner() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let url = server.url("/photo.jpg").absoluteString
            // A folder that does not exist.
            let missing = try run(["get", url, "-o", "/nonexistent-folder/x.jpg"])
            #expect(missing.status == 1 && !missing.stderr.contains("Usage"), "\(missing.stderr)")
            #expect(missing.stderr.contains("cannot write /nonexistent-folder/x.jpg: No such file or directory."))
            #expect(!FileManager.default.fileExists(atPath: "/nonexistent-folder"))
            let noFolder = try run(["get", url, "-o", "/nonexistent-folder/"])
            #expect(noFolder.status == 1 && noFolder.stderr.contains("no such folder"), "\(noFolder.stderr)")
            // A full disk (/dev/full answers every write with ENOSPC).
            let full = try run(["get", url, "-o", "/dev/full"])
            #expect(full.status == 1 && !full.stderr.contains("Usage"), "\(full.stderr)")
            #expect(full.stderr.contains("cannot write /dev/full: No space left on device."))
            // /dev/null takes the bytes and stays a device.
            let null = try run(["get", url, "-o", "/dev/null"])
            #expect(null.status == 0, "\(null.stderr)")
            var info = stat()
            #expect(stat("/dev/null", &info) == 0 && (info.st_mode & S_IFMT) == S_IFCHR)
        }
    }

    @Test func messagesNameTheWholeURLAndEndWithOneFullStop() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let long = server.url("/a/very/long/path/that/goes/on/and/on/well/past/sixty/characters/missing-image.png").absoluteString
            let result = try run(["get", long, "-o", directory.url.appendingPathComponent("x.png").path])
            #expect(result.status == 1)
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains(long) && !lines[0].contains("..."), "\(result.stderr)")
            #expect(lines[0].hasSuffix(".") && !lines[0].hasSuffix(".."))
            #expect(!result.stderr.contains("NSCocoaErrorDomain"))
            #expect(result.stdout.contains(long), "the progress line names the whole URL too")
        }
    }

    @Test(arguments: [(SIGTERM, Int32(143)), (SIGHUP, Int32(129)), (SIGINT, Int32(130))])
    func signalsCancelAndRemovePartialOutputs(_ signal: Int32, _ status: Int32) async throws {
        defer { directory.remove() }
        try await withServer { server in
            let out = try folder("out")
            let running = try CLIRunner.start(["get", server.url("/stall.jpg").absoluteString, "-o", out.appendingPathComponent("s.jpg").path,
                                               "--no-cache"], environment: environment)
            let deadline = ContinuousClock.now + .seconds(10)
            while server.requestCount("/stall.jpg") == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(200))
            let sent = ContinuousClock.now
            running.signal(signal)
            let result = running.wait()
            #expect(result.status == status, "\(result.stderr)")
            #expect(ContinuousClock.now - sent < .seconds(3))
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
        }
    }
}

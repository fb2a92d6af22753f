import Foundation
import Testing
@testable import WebImage

/// `webimage get`, `prefetch`, `cache` and `demo`, run as a subprocess against the in-process
/// server, with a cache folder of their own (XDG_CACHE_HOME).
@Suite(.serialized) struct LoadingCommandTests {
    let directory = TemporaryDirectory()
    var environment: [String: String] { ["XDG_CACHE_HOME": directory.url.appendingPathComponent("xdg").path] }

    func withServer(_ body: (TestHTTPServer) async throws -> Void) async throws {
        let server = TestHTTPServer()
        try await server.start()
        server.route("/photo.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))
        server.route("/badge.png", .respond(body: ManagerHarness.png))
        server.route("/corrupt.png", .respond(body: ManagerHarness.png.prefix(60)))
        do { try await body(server) } catch { await server.stop(); throw error }
        await server.stop()
    }

    @Test func getWritesFilesAndSaysWhereTheyCameFrom() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let out = directory.url.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let first = try CLIRunner.run(["get", server.url("/photo.jpg").absoluteString, server.url("/badge.png").absoluteString,
                                           "-o", out.path], environment: environment)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("640x480 jpeg") && first.stdout.contains("from network"))
            #expect(try Data(contentsOf: out.appendingPathComponent("photo.jpg")) == ManagerHarness.jpeg)
            #expect(try Image(contentsOf: out.appendingPathComponent("badge.png")).width == 64)
            // A new process: the memory cache is empty, the disk cache is not.
            let second = try CLIRunner.run(["get", server.url("/photo.jpg").absoluteString, "-o", out.path,
                                            "--resize", "64x64", "--mode", "fillcrop", "--format", "webp"], environment: environment)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stdout.contains("64x64") && second.stdout.contains("photo.webp"))
            #expect(server.requestCount("/photo.jpg") == 1)
            let third = try CLIRunner.run(["get", server.url("/photo.jpg").absoluteString, "-o", out.path], environment: environment)
            #expect(third.stdout.contains("from disk"), "\(third.stdout)")
            let uncached = try CLIRunner.run(["get", server.url("/photo.jpg").absoluteString, "-o", out.path, "--no-cache", "--progressive"],
                                             environment: environment)
            #expect(uncached.stdout.contains("from network") && server.requestCount("/photo.jpg") == 2)
        }
    }

    @Test func getErrorsPrintOneLineAndExitNonZero() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let out = directory.url.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let cases: [(String, String)] = [
                (server.url("/missing.png").absoluteString, "status 404"),
                ("not a url", "cannot be loaded"),
                ("ftp://example.com/a.png", "cannot be loaded"),
                (server.url("/corrupt.png").absoluteString, "could not be decoded"),
            ]
            for (url, expected) in cases {
                let result = try CLIRunner.run(["get", url, "-o", out.path], environment: environment)
                #expect(result.status == 1, "\(url)")
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 1 && lines[0].contains(expected), "\(url): \(result.stderr)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
            // An output folder that cannot be written (root ignores permission bits; /proc/self refuses everyone).
            let readOnly = directory.url.appendingPathComponent("read-only")
            try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: readOnly.path)
            let unwritable = geteuid() == 0 ? "/proc/self" : readOnly.path
            let refused = try CLIRunner.run(["get", server.url("/badge.png").absoluteString, "-o", unwritable], environment: environment)
            #expect(refused.status == 1 && refused.stderr.contains("cannot write"), "\(refused.stderr)")
            let missing = try CLIRunner.run(["get", server.url("/badge.png").absoluteString, "-o", "/nonexistent-folder/"], environment: environment)
            #expect(missing.status == 1 && missing.stderr.contains("no such folder"))
            #expect(try CLIRunner.run(["get", "x", "--resize", "big"]).status == 2)
        }
    }

    @Test func ctrlCDuringGetCancelsAndLeavesNoFile() async throws {
        defer { directory.remove() }
        try await withServer { server in
            server.route("/stall.jpg", .stallAfter(bytes: 1000, body: ManagerHarness.jpeg))
            let out = directory.url.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let running = try CLIRunner.start(["get", server.url("/stall.jpg").absoluteString, server.url("/photo.jpg").absoluteString,
                                               "-o", out.path, "--no-cache"], environment: environment)
            let deadline = ContinuousClock.now + .seconds(10)
            while server.requestCount("/stall.jpg") == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(200))
            let closesBefore = server.connectionCloses.count
            let interrupted = ContinuousClock.now
            running.signal(SIGINT)
            let result = running.wait()
            #expect(result.status == 130, "\(result.stderr)")
            #expect(ContinuousClock.now - interrupted < .seconds(2))
            for _ in 0..<100 where server.connectionCloses.count == closesBefore { try await Task.sleep(for: .milliseconds(10)) }
            #expect(server.connectionCloses.count > closesBefore, "the stalled transfer was not aborted")
            let left = try FileManager.default.contentsOfDirectory(atPath: out.path)
            #expect(!left.contains { $0.hasPrefix("stall") || $0.contains("tmp") || $0.hasPrefix(".") }, "\(left)")
        }
    }

    @Test func prefetchReportsAndCacheCommandsManageTheFolder() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let list = directory.url.appendingPathComponent("urls.txt")
            try "# samples\n\(server.url("/photo.jpg"))\n\n\(server.url("/badge.png"))\n".write(to: list, atomically: true, encoding: .utf8)
            let ok = try CLIRunner.run(["prefetch", list.path, "--concurrency", "2", "--namespace", "t"], environment: environment)
            #expect(ok.status == 0, "\(ok.stderr)")
            #expect(ok.stdout.contains("prefetched 2, skipped 0 of 2"))
            try "\(server.url("/photo.jpg"))\n\(server.url("/missing.png"))\n".write(to: list, atomically: true, encoding: .utf8)
            let partial = try CLIRunner.run(["prefetch", list.path, "--namespace", "t"], environment: environment)
            #expect(partial.status == 1 && partial.stdout.contains("prefetched 1, skipped 1 of 2"))
            // Each failure is listed at the end with its reason.
            #expect(partial.stdout.contains("failed:\n  \(server.url("/missing.png")): The server answered"), "\(partial.stdout)")
            let unreadable = try CLIRunner.run(["prefetch", "/nonexistent.txt"], environment: environment)
            #expect(unreadable.status == 1 && unreadable.stderr.contains("No such file or directory"), "\(unreadable.stderr)")

            let stats = try CLIRunner.run(["cache", "stats", "--namespace", "t"], environment: environment)
            #expect(stats.status == 0 && stats.stdout.contains("entries: 2"), "\(stats.stdout)")
            #expect(stats.stdout.contains(directory.url.appendingPathComponent("xdg").path))
            let clean = try CLIRunner.run(["cache", "clean", "--namespace", "t"], environment: environment)
            #expect(clean.status == 0 && clean.stdout.contains("removed 0 entries"))
            let clear = try CLIRunner.run(["cache", "clear", "--namespace", "t"], environment: environment)
            #expect(clear.status == 0 && clear.stdout.contains("removed 2 entries"), "\(clear.stdout)")
            #expect(try CLIRunner.run(["cache", "stats", "--namespace", "t"], environment: environment).stdout.contains("entries: 0"))
        }
    }

    @Test func prefetchHonoursTheRateLimit() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let list = directory.url.appendingPathComponent("many.txt")
            try (0..<35).map { "\(server.url("/badge.png?n=\($0)"))" }.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
            let start = ContinuousClock.now
            let limited = try CLIRunner.run(["prefetch", list.path, "--concurrency", "35", "--rate-limit", "10/s", "--namespace", "r"],
                                            environment: environment)
            let elapsed = ContinuousClock.now - start
            #expect(limited.status == 0 && limited.stdout.contains("prefetched 35, skipped 0 of 35"), "\(limited.stdout)")
            #expect(elapsed >= .milliseconds(950), "25 at once, then 10 more at 10 a second: \(elapsed)")
            #expect(try CLIRunner.run(["prefetch", list.path, "--rate-limit", "fast"], environment: environment).status == 2)
        }
    }

    @Test func demoRunsWithoutATerminalAndPicksAnotherPortWhenTaken() async throws {
        defer { directory.remove() }
        let blocker = TestHTTPServer()
        try await blocker.start()
        let taken = blocker.port
        let start = ContinuousClock.now
        // A temporary folder of its own: the demo must leave nothing in it.
        let temporary = directory.url.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let result = try CLIRunner.run(["demo", "--port", "\(taken)", "-o", directory.url.appendingPathComponent("thumbs").path],
                                       environment: environment.merging(["TMPDIR": temporary.path]) { $1 })
        let elapsed = ContinuousClock.now - start
        await blocker.stop()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(elapsed < .seconds(60))
        #expect(result.stdout.contains("port \(taken) is taken"))
        #expect(result.stdout.contains("7 images, 7 HTTP requests"))
        #expect(result.stdout.contains("from memory") && result.stdout.contains("from disk"))
        #expect(result.stdout.contains("preview") && result.stdout.contains("| image"))
        #expect(!result.stdout.contains("\u{1B}["), "no terminal escapes in a pipe")
        let thumbs = try FileManager.default.contentsOfDirectory(atPath: directory.url.appendingPathComponent("thumbs").path)
        #expect(thumbs.count == 7)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty, "the demo left its work folder")
        // Transformer keys are shown in a short form; --verbose adds the full cache key.
        #expect(result.stdout.contains("resize 96x96 fillcrop + round corners 16") && !result.stdout.contains("key: "))
        // Without -o nothing is written, and the summary says so.
        let quiet = try CLIRunner.run(["demo", "--port", "0", "--verbose"], environment: environment.merging(["TMPDIR": temporary.path]) { $1 })
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(quiet.stdout.contains("thumbnails kept in memory") && quiet.stdout.contains("key: http://127.0.0.1:"))
        #expect(quiet.stdout.contains("-ResizingTransformer(%7B96.000000,96.000000%7D,2)-RoundCornerTransformer("), "the full key")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty)
    }

    @Test func prefetchSkipsBadLinesReportsStoreFailuresAndHonoursMaxTime() async throws {
        defer { directory.remove() }
        try await withServer { server in
            server.route("/stall.jpg", .stallAfter(bytes: 1000, body: ManagerHarness.jpeg))
            let list = directory.url.appendingPathComponent("urls.txt")
            try "\(server.url("/photo.jpg"))\nthis is not a url\n\(server.url("/badge.png"))\n".write(to: list, atomically: true, encoding: .utf8)
            let bad = try CLIRunner.run(["prefetch", list.path, "--namespace", "b"], environment: environment)
            #expect(bad.status == 1, "a skipped line means not everything was prefetched")
            #expect(bad.stderr.contains("urls.txt:2: not a URL, skipped: this is not a url."), "\(bad.stderr)")
            #expect(bad.stdout.contains("prefetched 2, skipped 0 of 2"), "\(bad.stdout)")
            // A cache that cannot be written: loaded, but not stored, so not a success.
            try "\(server.url("/photo.jpg"))\n".write(to: list, atomically: true, encoding: .utf8)
            let unstored = try CLIRunner.run(["prefetch", list.path], environment: ["XDG_CACHE_HOME": "/dev/null/cache"])
            #expect(unstored.status == 1)
            #expect(unstored.stdout.contains("not stored in the disk cache"), "\(unstored.stdout)")
            // --max-time and --verbose: the failure is reported as it happens and again at the end.
            try "\(server.url("/stall.jpg"))\n".write(to: list, atomically: true, encoding: .utf8)
            let start = ContinuousClock.now
            let slow = try CLIRunner.run(["prefetch", list.path, "--max-time", "1", "--verbose", "--namespace", "b"], environment: environment)
            #expect(ContinuousClock.now - start < .seconds(8))
            #expect(slow.status == 1 && slow.stderr.contains("timed out after 1 s"), "\(slow.stderr)")
            #expect(slow.stdout.contains("timed out after 1 s"))
        }
    }

    @Test func prefetchWithoutATerminalPrintsALineEveryTenPercentNotPerURL() async throws {
        defer { directory.remove() }
        try await withServer { server in
            let list = directory.url.appendingPathComponent("urls.txt")
            let urls = (0..<60).map { server.url("/badge.png?n=\($0)").absoluteString }   // the query is not part of the route
            try urls.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
            let result = try CLIRunner.run(["prefetch", list.path, "--concurrency", "8", "--namespace", "p"], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            let progressLines = result.stdout.split(separator: "\n").filter { $0.contains(" URLs") }
            #expect(progressLines.count >= 3 && progressLines.count <= 14, "\(result.stdout)")
            #expect(result.stdout.contains("60/60 URLs"))
            #expect(!result.stdout.contains(" KB") && !result.stdout.contains(" B/s"), "counts are not bytes: \(result.stdout)")
        }
    }
}

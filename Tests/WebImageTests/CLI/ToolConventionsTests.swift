import Foundation
import Testing
@testable import WebImage

/// The tool as a whole: `--version`, usage errors, a copied binary, `info`, `convert`, `cache`
/// and `prefetch` conventions.
@Suite(.serialized) struct ToolConventionsTests {
    let directory = TemporaryDirectory()
    var environment: [String: String] { ["XDG_CACHE_HOME": directory.url.appendingPathComponent("xdg").path] }

    static let samplesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources/webimage/Samples")

    @Test func versionUnknownCommandsAndBadPortsAreUsageErrors() throws {
        let version = try CLIRunner.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("webimage "), "\(version.stdout)")
        let unknown = try CLIRunner.run(["frobnicate"])
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown command 'frobnicate'"), "\(unknown.stderr)")
        // Every real command is known (the list the check uses matches the subcommands).
        let help = try CLIRunner.run(["--help"]).stdout
        for command in ["demo", "get", "prefetch", "cache", "info", "convert"] {
            #expect(help.contains("  \(command)"), "\(command) missing from --help")
            #expect(try CLIRunner.run([command, "--help"]).status == 0)
        }
        for port in ["99999", "65536", "100000000000000000000"] {
            let result = try CLIRunner.run(["demo", "--port", port])
            #expect(result.status == 2 && result.stderr.contains("port"), "\(port): \(result.stderr)")
        }
        #expect(try CLIRunner.run(["get"]).status == 2)
        #expect(try CLIRunner.run(["info", "--no-such-flag"]).status == 2)
    }

    /// The binary copied alone into a fresh folder (as `cp webimage /usr/local/bin` does) works:
    /// its samples are compiled in, and they are the Samples folder's files.
    @Test func aCopiedBinaryWorksOnItsOwn() throws {
        defer { directory.remove() }
        let bin = directory.url.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let copy = bin.appendingPathComponent("webimage")
        try FileManager.default.copyItem(at: try #require(CLIRunner.executable), to: copy)
        let empty = directory.url.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let embedded = try CLIRunner.run(["info", "--json"], directory: empty, executable: copy)
        #expect(embedded.status == 0, "\(embedded.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.samplesFolder.path).filter { !$0.hasPrefix(".") }.sorted()
        let fromFiles = try CLIRunner.run(["info", "--json"] + names.map { Self.samplesFolder.appendingPathComponent($0).path })
        func hashes(_ output: String) throws -> [String] {
            try output.split(separator: "\n").map { line in
                let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return "\(object["frames"] ?? "")"
            }
        }
        #expect(try hashes(embedded.stdout) == hashes(fromFiles.stdout), "EmbeddedSamples.swift is out of date: run scripts/embed-samples.py")
        #expect(embedded.stdout.split(separator: "\n").count == names.count)
        let text = try CLIRunner.run(["info"], directory: empty, executable: copy)
        #expect(text.status == 0 && text.stdout.contains("photo-baseline.jpg: jpeg 640x480"))
    }

    @Test func infoNamesItsInputsAndGivesOneLinePerInputInJSON() throws {
        let good = Corpus.directory.appendingPathComponent("gif/chi.gif").path
        let bad = Corpus.directory.appendingPathComponent("png/xc1n0g08.png").path
        let text = try CLIRunner.run(["info", good])
        #expect(text.stdout.hasPrefix("\(good): gif 320x240"))
        let json = try CLIRunner.run(["info", "--json", good, bad, "/nonexistent.png"])
        #expect(json.status == 1)
        let objects = try json.stdout.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == 3)
        #expect(objects.map { $0["path"] as? String } == [good, bad, "/nonexistent.png"])
        #expect(objects[0]["format"] as? String == "gif" && objects[0]["error"] == nil)
        #expect((objects[1]["error"] as? String)?.contains("could not be decoded") == true)
        #expect((objects[2]["error"] as? String)?.contains("No such file or directory") == true, "\(objects[2])")
        #expect(json.stderr.split(separator: "\n").count == 2)
        // Standard input.
        let piped = try CLIRunner.run(["info", "--json", "-"], input: try Data(contentsOf: URL(fileURLWithPath: good)))
        #expect(piped.status == 0 && piped.stdout.contains("\"path\":\"-\"") && piped.stdout.contains("\"frameCount\":31"), "\(piped.stderr)")
    }

    @Test func convertReadsAndWritesStandardStreamsAndSaysWhatAFormatCannotHold() throws {
        defer { directory.remove() }
        let gif = Corpus.directory.appendingPathComponent("gif/chi.gif")
        let out = directory.url
        // stdin -> file, animation kept in WebP.
        let webp = try CLIRunner.run(["convert", "-", out.appendingPathComponent("a.webp").path], input: try Data(contentsOf: gif))
        #expect(webp.status == 0 && webp.stderr.isEmpty, "\(webp.stderr)")
        let animated = try Image(contentsOf: out.appendingPathComponent("a.webp"))
        #expect(animated.frameCount > 1 && abs(animated.frameDurations.reduce(0, +) - 3.1) < 0.001, "\(animated.frameDurations)")
        // file -> stdout with --format.
        let piped = try CLIRunner.run(["convert", gif.path, "-", "--format", "gif"])
        #expect(piped.status == 0)
        #expect(try Image(data: piped.stdoutData).frameCount == 31)
        #expect(try CLIRunner.run(["convert", gif.path, "-"]).status == 2, "standard output needs --format")
        // A still format says it kept one frame.
        let jpeg = try CLIRunner.run(["convert", gif.path, out.appendingPathComponent("a.jpg").path])
        #expect(jpeg.status == 0 && jpeg.stderr.contains("JPEG holds one frame: wrote the first of 31 frames"), "\(jpeg.stderr)")
        // --format overrides an extension the tool does not know.
        #expect(try CLIRunner.run(["convert", gif.path, out.appendingPathComponent("a.out").path, "--format", "png"]).status == 0)
        #expect(try Image(contentsOf: out.appendingPathComponent("a.out")).format == .png)
        // WebP's size limit is named.
        let strip = out.appendingPathComponent("strip.png")
        try Image(bitmap: Fixtures.gradient(width: 20_000, height: 2, opaque: true)).encoded(as: .png).write(to: strip)
        let tooWide = try CLIRunner.run(["convert", strip.path, out.appendingPathComponent("strip.webp").path])
        #expect(tooWide.status == 1 && tooWide.stderr.contains("at most 16383 pixels"), "\(tooWide.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("strip.webp").path))
        // Write failures are runtime errors with the system's reason, not usage errors.
        let full = try CLIRunner.run(["convert", gif.path, "/dev/full", "--format", "png"])
        #expect(full.status == 1 && full.stderr.contains("No space left on device") && !full.stderr.contains("Usage"), "\(full.stderr)")
        let missing = try CLIRunner.run(["convert", gif.path, "/nonexistent-dir/x.png"])
        #expect(missing.status == 1 && missing.stderr.contains("No such file or directory"), "\(missing.stderr)")
    }

    /// `cache clear --namespace ..` once deleted the whole XDG cache tree.
    @Test func hostileNamespacesAreRefusedAndNothingOutsideTheCacheIsRemoved() throws {
        defer { directory.remove() }
        let xdg = directory.url.appendingPathComponent("xdg")
        let planted = [directory.url.appendingPathComponent("victim/file.txt"), xdg.appendingPathComponent("other-program/data"),
                       xdg.appendingPathComponent("com.webimage.cache/other/" + String(repeating: "a", count: 32))]
        for file in planted {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("keep".utf8).write(to: file)
        }
        for namespace in ["..", "../victim", "../..", ".", "", "a/b", "/tmp", ".hidden", "x\u{1}y"] {
            for command in ["clear", "clean", "stats"] {
                let result = try CLIRunner.run(["cache", command, "--namespace", namespace], environment: environment)
                #expect(result.status == 2 && result.stderr.contains("is not a plain name"), "\(command) \(namespace.debugDescription): \(result.stderr)")
            }
            #expect(try CLIRunner.run(["get", "http://127.0.0.1:1/x.png", "--namespace", namespace], environment: environment).status == 2)
            #expect(try CLIRunner.run(["prefetch", "-", "--namespace", namespace], environment: environment).status == 2)
        }
        for file in planted { #expect(FileManager.default.fileExists(atPath: file.path), "\(file.path) was removed") }
    }

    @Test func clearReportsWhatItRemovedAndFailsOnAReadOnlyCache() async throws {
        defer { directory.remove() }
        let folder = directory.url.appendingPathComponent("xdg/com.webimage.cache/ro")
        let disk = DiskCache(directory: folder)
        try await disk.store(Data(count: 1000), forKey: "https://example.com/a.png")
        try await disk.store(Data(count: 500), forKey: "https://example.com/b")
        let stats = try CLIRunner.run(["cache", "stats", "--namespace", "ro"], environment: environment)
        #expect(stats.stdout.contains("entries: 2"))
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            // Not root: permission bits are enough.
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
            let refused = try CLIRunner.run(["cache", "clear", "--namespace", "ro"], environment: environment)
            #expect(refused.status == 1 && refused.stderr.contains("cannot remove"), "\(refused.stderr)")
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
            return
        }
        // Root ignores permission bits: run the tool as nobody over root's files.
        for path in [directory.url.path, directory.url.appendingPathComponent("xdg").path] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        let executable = try #require(CLIRunner.executable)
        let asNobody = try CLIRunner.run(["--reuid=65534", "--regid=65534", "--clear-groups", executable.path,
                                          "cache", "clear", "--namespace", "ro"],
                                         environment: environment, executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
        #expect(asNobody.status == 1, "\(asNobody.stdout) \(asNobody.stderr)")
        #expect(asNobody.stdout.contains("removed 0 entries"), "\(asNobody.stdout)")
        #expect(asNobody.stderr.contains("cannot remove") && asNobody.stderr.contains("Permission denied"), "\(asNobody.stderr)")
        #expect(await DiskCache(directory: folder).count() == 2)
        let cleared = try CLIRunner.run(["cache", "clear", "--namespace", "ro"], environment: environment)
        #expect(cleared.status == 0 && cleared.stdout.contains("removed 2 entries (1.5 KB)"), "\(cleared.stdout)")
    }

    @Test func relativeXDGCacheHomeIsIgnored() throws {
        defer { directory.remove() }
        let home = directory.url.appendingPathComponent("home")
        let stats = try CLIRunner.run(["cache", "stats"], environment: ["XDG_CACHE_HOME": "relative/dir", "HOME": home.path],
                                      directory: directory.url)
        #expect(stats.stdout.contains("folder:  \(home.path)/.cache/com.webimage.cache/cli"), "\(stats.stdout)")
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("relative").path))
    }
}

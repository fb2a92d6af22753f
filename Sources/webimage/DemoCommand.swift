import ArgumentParser
import Foundation
import NIOCore
import WebImage

/// `webimage demo`: the library's main job on an embedded default, with no internet: a local
/// HTTP server over the bundled samples, loaded concurrently with progress bars and progressive
/// previews, loaded again from memory and from disk, turned into thumbnails, and summed up.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Load the bundled samples from a local HTTP server: network, memory, disk, thumbnails, summary."
    )

    @Option(help: "The port of the local server, 1 to 65535 (another is chosen when it is taken; 0 picks any).")
    var port: Int = 8089

    @Option(name: .shortAndLong, help: "Write the thumbnails into this folder (created). Without it they stay in memory.")
    var output: String?

    @Flag(help: "Show the full cache keys of the thumbnails.")
    var verbose = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError.sentence("--port must be between 0 and 65535, not \(port)") }
    }

    /// What the demo learns about one sample.
    struct Row: Sendable {
        var name: String
        var bytes = 0
        var description = ""
        var network: Duration = .zero
        var previews = 0
        var lastPreview: String = "-"
        var memory: Duration = .zero
        var disk: Duration = .zero
        var thumbnail = "-"
    }

    func run() async throws {
        let started = ContinuousClock.now
        let samples = SampleImages.all.reduce(into: [String: Data]()) { $0[$1.name] = $1.data }
        let thumbnails = output.map { URL(fileURLWithPath: $0) }
        if let output {
            do { try OutputFile.makeFolder(output) } catch {
                Terminal.error(Terminal.describe(error))
                throw ExitCode(1)
            }
        }
        let server = try await DemoServer(files: samples, port: port) { print("note: \($0)") }
        // The demo's cache lives in a folder of its own that is removed at the end, whatever happens.
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-demo-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        do {
            let verbose = self.verbose
            let rows = try await Interrupt.run {
                try await DemoRun(server: server, samples: samples, cacheFolder: work.appendingPathComponent("cache"),
                                  thumbnails: thumbnails, verbose: verbose).run()
            }
            DemoRun.printSummary(rows, requests: server.requestCount, thumbnails: thumbnails,
                                 elapsed: ContinuousClock.now - started)
            await server.stop()
        } catch {
            await server.stop()
            if !(error is ExitCode) { Terminal.error(Terminal.describe(error)) }
            throw error is ExitCode ? error : ExitCode(1)
        }
    }
}

/// The four phases of the demo.
struct DemoRun: Sendable {
    let server: DemoServer
    let samples: [String: Data]
    let cacheFolder: URL
    /// Where to write the thumbnails; nil keeps them in memory.
    let thumbnails: URL?
    let verbose: Bool

    /// The four phases; returns only when the disk cache has written what they stored (the
    /// thumbnails are stored in the background), so that removing the cache folder afterwards
    /// removes everything: a store still running would write into it again.
    func run() async throws -> [DemoCommand.Row] {
        let manager = ImageManager(cache: ImageCache(namespace: "demo", directory: cacheFolder, config: .init(cleanupInterval: nil)))
        do {
            let rows = try await phases(manager)
            await manager.waitForPendingStores()
            return rows
        } catch {
            await manager.waitForPendingStores()
            throw error
        }
    }

    private func phases(_ manager: ImageManager) async throws -> [DemoCommand.Row] {
        let names = samples.keys.sorted()
        let base = "http://127.0.0.1:\(server.port)/"
        print("Serving \(names.count) sample images on \(base) (throttled to about 130 KB/s per transfer).")
        print("\n1. Network: every image at once, with progressive previews")
        let display = ProgressDisplay()
        var rows = try await withThrowingTaskGroup(of: DemoCommand.Row.self) { group in
            for name in names {
                group.addTask { try await network(name, url: URL(string: base + name)!, manager: manager, display: display) }
            }
            return try await group.reduce(into: [DemoCommand.Row]()) { $0.append($1) }.sorted { $0.name < $1.name }
        }

        print("\n2. Memory: the same URLs again")
        for (index, time) in try await timedPass(rows, base: base, manager: manager).enumerated() { rows[index].memory = time }

        print("\n3. Disk: memory cleared, the same URLs again")
        await manager.cache.clear(.memory)
        for (index, time) in try await timedPass(rows, base: base, manager: manager).enumerated() { rows[index].disk = time }

        print("\n4. Thumbnails: 96x96, cropped to fill, round corners, made from the cached originals")
        var context = ImageContext(transformer: PipelineTransformer([
            ResizingTransformer(width: 96, height: 96, scaleMode: .aspectFill), RoundCornerTransformer(radius: 16),
        ]))
        context.originalQueryCacheType = .disk
        let recipe = "resize 96x96 fillcrop + round corners 16"
        for index in rows.indices {
            let url = URL(string: base + rows[index].name)!
            let result = try await manager.result(for: url, options: .transformAnimatedImage, context: context)
            let png = try result.image.encoded(as: .png)
            rows[index].thumbnail = "\(result.image.width)x\(result.image.height) (\(Terminal.source(result.cacheType)))"
            let name = rows[index].name.padding(toLength: 30, withPad: " ", startingAt: 0)
            var line = "   \(name) \(recipe), \(Terminal.bytes(Int64(png.count))) PNG"
            if let thumbnails {
                let file = thumbnails.appendingPathComponent(rows[index].name.replacingOccurrences(of: ".", with: "-") + "-thumb.png")
                try OutputFile.write(png, to: file.path)
                line += " -> \(file.path)"
            }
            print(line)
            if verbose { print("      key: \(manager.cacheKey(for: url, context: context))") }
        }
        return rows
    }

    /// Loads every row's URL once more, one after the other; prints and returns each time.
    private func timedPass(_ rows: [DemoCommand.Row], base: String, manager: ImageManager) async throws -> [Duration] {
        var times: [Duration] = []
        for row in rows {
            let start = ContinuousClock.now
            let result = try await manager.result(for: URL(string: base + row.name)!)
            let time = ContinuousClock.now - start
            times.append(time)
            print("   \(row.name.padding(toLength: 30, withPad: " ", startingAt: 0)) from \(Terminal.source(result.cacheType)) in \(Terminal.duration(time))")
        }
        return times
    }

    private func network(_ name: String, url: URL, manager: ImageManager, display: ProgressDisplay) async throws -> DemoCommand.Row {
        var row = DemoCommand.Row(name: name)
        row.bytes = samples[name]?.count ?? 0
        let bar = display.add(name)
        let start = ContinuousClock.now
        var context = ImageContext()
        context.previewInterval = .milliseconds(60)
        for try await event in manager.events(for: url, options: [.progressiveLoad, .waitStoreCache], context: context) {
            switch event {
            case .progress(let progress): display.update(bar, progress)
            case .preview(let preview):
                row.previews += 1
                row.lastPreview = "\(Int(preview.fractionDecoded * 100))%"
                let scans = preview.scans > 0 ? ", scan \(preview.scans)" : ""
                display.note(bar, "preview \(row.previews): \(Int(preview.fractionDecoded * 100))% of rows\(scans)")
            case .cached: break
            case .finished(let result):
                row.network = ContinuousClock.now - start
                let image = result.image
                row.description = "\(image.format) \(image.width)x\(image.height)" + (image.isAnimated ? ", \(image.frameCount) frames" : "")
                display.finish(bar, "\(row.description) in \(Terminal.duration(row.network)), \(row.previews) previews")
            }
        }
        return row
    }

    static func printSummary(_ rows: [DemoCommand.Row], requests: Int, thumbnails: URL?, elapsed: Duration) {
        print("\nSummary")
        let header = ["image", "bytes", "decoded", "network", "previews", "memory", "disk", "thumbnail"]
        let table = rows.map { row in
            [row.name, Terminal.bytes(Int64(row.bytes)), row.description, Terminal.duration(row.network), "\(row.previews)",
             Terminal.duration(row.memory), Terminal.duration(row.disk), row.thumbnail]
        }
        let widths = header.indices.map { column in ([header] + table).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: " | ") + " |"
        }
        print(line(header))
        print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
        for cells in table { print(line(cells)) }
        let kept = thumbnails.map { "thumbnails in \($0.path)" } ?? "thumbnails kept in memory (-o DIR writes them)"
        print("\n\(rows.count) images, \(requests) HTTP requests, \(kept), done in \(Terminal.duration(elapsed)).")
    }
}

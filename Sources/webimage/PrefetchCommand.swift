import ArgumentParser
import Foundation
import WebImage

/// `webimage prefetch`: loads a list of URLs into the caches with one overall progress bar.
struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Load the URLs listed in a file (one per line, # starts a comment) into the caches.",
        discussion: "Exits 1 when any URL was skipped (failed), 130 on Ctrl-C."
    )

    @Argument(help: "A file of URLs, one per line; - reads standard input.")
    var file: String

    @Option(help: "Loads at once.")
    var concurrency: Int = 3

    @Option(help: "The cache namespace.")
    var namespace: String = "cli"

    func validate() throws {
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 256") }
    }

    func run() async throws {
        let text: String
        do {
            text = file == "-" ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
                : try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            Terminal.error("\(file): cannot read: \((error as NSError).localizedDescription)")
            throw ExitCode(1)
        }
        var urls: [URL] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            guard let url = URL(string: line), url.scheme != nil else {
                Terminal.error("\(file):\(number + 1): not a URL: \(line)")
                throw ExitCode(1)
            }
            urls.append(url)
        }
        let manager = ImageManager(cache: ImageCache(namespace: namespace))
        // The process ends right after: disk writes must be done before it does.
        let prefetcher = ImagePrefetcher(manager: manager, maxConcurrentPrefetchCount: concurrency, options: [.lowPriority, .waitStoreCache])
        let display = ProgressDisplay()
        let start = ContinuousClock.now
        let list = urls
        let final = try await Interrupt.run {
            let bar = display.add("prefetch \(list.count) URLs")
            var last = PrefetchProgress(finished: 0, skipped: 0, total: list.count)
            display.update(bar, ImageProgress(receivedBytes: 0, expectedBytes: Int64(list.count)))
            for await progress in prefetcher.prefetch(list) {
                last = progress
                display.update(bar, ImageProgress(receivedBytes: Int64(progress.completed), expectedBytes: Int64(progress.total)))
                display.note(bar, "\(progress.completed)/\(progress.total)")
            }
            display.finish(bar, "\(last.completed)/\(last.total)")
            return last
        }
        print("prefetched \(final.finished), skipped \(final.skipped) of \(final.total) in \(Terminal.duration(ContinuousClock.now - start))")
        if final.skipped > 0 { throw ExitCode(1) }
    }
}

import ArgumentParser
import Foundation
import WebImage

/// `webimage prefetch`: loads a list of URLs into the caches with one overall progress bar.
struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Load the URLs listed in a file (one per line, # starts a comment) into the caches.",
        discussion: """
            A line that is not a URL is reported and skipped. At the end, every URL that failed is \
            listed with its reason (--verbose: also as it happens). Exits 0 only when every URL was \
            loaded and stored in the disk cache; 1 otherwise; 130/143/129 on SIGINT/SIGTERM/SIGHUP.
            """
    )

    @Argument(help: "A file of URLs, one per line; - reads standard input.")
    var file: String

    @Option(help: "Loads at once.")
    var concurrency: Int = 3

    @Option(help: "Give up on a URL after this many seconds in all.")
    var maxTime: Double?

    @Option(help: "Try a URL up to this many more times after a transient failure (timeout, reset, 408, 429, 5xx).")
    var retries: Int = 0

    @Option(help: "Start at most N new downloads a second after a burst of 25 (N/s or N; 0: no limit).")
    var rateLimit: RateLimitOption = RateLimitOption(argument: "80")!

    @Option(help: "A fleet's shared cache tier behind the disk cache: memcached://HOST:PORT,HOST:PORT (the port defaults to 11211). An unreachable node is a miss, not an error.")
    var sharedCache: SharedCacheOption?

    @Option(help: CachePolicyOption.help)
    var cachePolicy: CachePolicyOption = .respect

    @Flag(help: "Download and store the bytes on disk only, without decoding them (a later load decodes them).")
    var diskOnly = false

    @Flag(help: "Report each failure as it happens.")
    var verbose = false

    @Option(help: "The cache namespace: a plain name (no '/', no leading dot).")
    var namespace: String = "cli"

    func validate() throws {
        guard (1...256).contains(concurrency) else { throw ValidationError.sentence("--concurrency must be between 1 and 256, not \(concurrency)") }
        if let problem = Deadline.validate(maxTime) { throw ValidationError.sentence(problem) }
        if let problem = Retries.validate(retries) { throw ValidationError.sentence(problem) }
        try CacheNamespace.validate(namespace)
    }

    /// One URL that was not prefetched, and why.
    struct Failure: Sendable {
        let url: String
        let reason: String
    }

    func run() async throws {
        let text: String
        do {
            text = String(decoding: try InputFile.read(file), as: UTF8.self)
        } catch {
            Terminal.error(Terminal.describe(error))
            throw ExitCode(1)
        }
        let (urls, badLines) = URLList.parse(text, name: file == "-" ? "standard input" : file)
        for line in badLines { Terminal.error(line) }
        let cache = ImageCache(namespace: namespace)
        var configuration = rateLimit.configuration
        configuration.defaultContext.httpCachePolicy = cachePolicy.policy
        let manager = ImageManager(cache: try SharedCacheOption.cache(cache, tier: sharedCache), configuration: configuration)
        let display = ProgressDisplay()
        let start = ContinuousClock.now
        let (width, deadline, verbose, diskOnly) = (concurrency, maxTime, self.verbose, self.diskOnly)
        let loadContext = Retries.context(ImageContext(), retries)
        let failures = try await Interrupt.run {
            let bar = display.add("prefetch", unit: .items("URLs"))
            display.update(bar, ImageProgress(receivedBytes: 0, expectedBytes: Int64(urls.count)))
            let failures = await withTaskGroup(of: Failure?.self) { group in
                var pending = urls.makeIterator(), done = 0
                var failures: [Failure] = []
                func addNext() {
                    guard let url = pending.next() else { return }
                    group.addTask { await PrefetchCommand.prefetch(url, manager: manager, cache: cache, context: loadContext, deadline: deadline,
                                                                   diskOnly: diskOnly) }
                }
                for _ in 0..<width { addNext() }
                while let outcome = await group.next() {
                    done += 1
                    if let outcome {
                        failures.append(outcome)
                        if verbose { Terminal.error("\(outcome.url): \(outcome.reason)") }
                    }
                    display.update(bar, ImageProgress(receivedBytes: Int64(done), expectedBytes: Int64(urls.count)))
                    if !failures.isEmpty { display.note(bar, "\(failures.count) failed") }
                    addNext()
                }
                return failures
            }
            display.finish(bar, "\(urls.count - failures.count)/\(urls.count) URLs")
            return failures
        }
        let elapsed = Terminal.duration(ContinuousClock.now - start)
        print("prefetched \(urls.count - failures.count), skipped \(failures.count) of \(urls.count) in \(elapsed)"
              + (badLines.isEmpty ? "" : "; \(badLines.count) line(s) were not URLs"))
        if !failures.isEmpty {
            print("failed:")
            for failure in failures { print("  \(failure.url): \(failure.reason).") }
        }
        if !failures.isEmpty || !badLines.isEmpty { throw ExitCode(1) }
    }

    /// Loads `url` into the caches with `context`, waiting for the disk write; nil when it is there, else why not.
    static func prefetch(_ url: URL, manager: ImageManager, cache: ImageCache, context loadContext: ImageContext,
                         deadline: Double?, diskOnly: Bool) async -> Failure? {
        let start = ContinuousClock.now
        do {
            if diskOnly {
                // The bytes only; a disk that refuses them is reported by the store's log.
                _ = try await manager.data(for: url, options: [.lowPriority, .waitStoreCache], context: Deadline.context(loadContext, deadline))
                return await cache.disk.contains(manager.cacheKey(for: url)) ? nil
                    : Failure(url: url.absoluteString, reason: "loaded, but not stored in the disk cache \(cache.disk.location)")
            }
            let result = try await manager.result(for: url, options: [.lowPriority, .waitStoreCache],
                                                  context: Deadline.context(loadContext, deadline))
            if let failure = result.storeFailure {
                return Failure(url: url.absoluteString,
                               reason: "loaded, but not stored in the disk cache \(cache.disk.location): \(Terminal.describe(failure))")
            }
            return nil
        } catch {
            let explained = Deadline.explain(error, seconds: deadline, elapsed: ContinuousClock.now - start, what: "loading")
            return Failure(url: url.absoluteString, reason: Terminal.describe(explained))
        }
    }
}

/// A file of URLs: one per line, blank lines and `#` comments ignored.
enum URLList {
    /// The URLs, and a message for each line that is not an absolute URL.
    static func parse(_ text: String, name: String) -> (urls: [URL], badLines: [String]) {
        var urls: [URL] = [], bad: [String] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            guard let url = URL(string: line), let scheme = url.scheme, !scheme.isEmpty else {
                bad.append("\(name):\(number + 1): not a URL, skipped: \(line)")
                continue
            }
            urls.append(url)
        }
        return (urls, bad)
    }
}

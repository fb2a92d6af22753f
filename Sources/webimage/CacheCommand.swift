import ArgumentParser
import Foundation
import WebImage

/// `webimage cache`: the disk cache of a namespace.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show, clean or clear the disk cache.",
        discussion: "Only the cache's own files are ever removed. Exits 1 when something could not be removed.",
        subcommands: [Stats.self, Clean.self, Clear.self]
    )

    /// The namespace option every cache subcommand takes.
    struct Namespace: ParsableArguments {
        @Option(help: "The cache namespace: a plain name (no '/', no leading dot).")
        var namespace: String = "cli"

        func validate() throws { try CacheNamespace.validate(namespace) }

        var cache: ImageCache { ImageCache(namespace: namespace, config: .init(cleanupInterval: nil)) }
    }

    /// `cache stats`.
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the cache folder, its entry count and size.")
        @OptionGroup var options: Namespace

        func run() async throws {
            let disk = options.cache.disk
            print("folder:  \(disk.location)")
            print("entries: \(await disk.count())")
            print("size:    \(Terminal.bytes(Int64(await disk.totalSize())))")
        }
    }

    /// `cache clean`.
    struct Clean: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove expired entries and trim to the size limit.")
        @OptionGroup var options: Namespace

        func run() async throws {
            let report = await options.cache.removeExpiredData()
            try CacheCommand.finish(report, verb: "removed", folder: options.cache.disk.location)
        }
    }

    /// `cache clear`.
    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")
        @OptionGroup var options: Namespace

        func run() async throws {
            let cache = options.cache
            try CacheCommand.finish(await cache.clearDisk(), verb: "removed", folder: cache.disk.location)
        }
    }

    /// Prints what a cleanup removed; lists what it could not remove and exits 1 then.
    static func finish(_ report: DiskCache.CleanupReport, verb: String, folder: String) throws {
        let entries = report.removedCount == 1 ? "entry" : "entries"
        print("\(verb) \(report.removedCount) \(entries) (\(Terminal.bytes(Int64(report.removedBytes)))) from \(folder)")
        guard report.succeeded else {
            for failure in report.failures.prefix(10) { Terminal.error("cannot remove \(failure.path): \(failure.reason)") }
            if report.failures.count > 10 { Terminal.error("\(report.failures.count - 10) more files could not be removed") }
            throw ExitCode(1)
        }
    }
}

/// The `--namespace` check shared by every command that opens a cache.
enum CacheNamespace {
    /// Throws a usage error naming the rule a namespace breaks.
    static func validate(_ namespace: String) throws {
        do { try ImageCache.validate(namespace: namespace) } catch {
            throw ValidationError.sentence("--namespace: \(Terminal.describe(error))")
        }
    }
}

import ArgumentParser
import Foundation
import WebImage

/// `webimage cache`: the disk cache of a namespace.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show, clean or clear the disk cache.",
        subcommands: [Stats.self, Clean.self, Clear.self]
    )

    /// The namespace option every cache subcommand takes.
    struct Namespace: ParsableArguments {
        @Option(help: "The cache namespace.")
        var namespace: String = "cli"

        var cache: ImageCache { ImageCache(namespace: namespace, config: .init(cleanupInterval: nil)) }
    }

    /// `cache stats`.
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the cache folder, its entry count and size.")
        @OptionGroup var options: Namespace

        func run() async throws {
            let disk = options.cache.disk
            print("folder:  \(disk.directory.path)")
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
            print("removed \(report.removedCount) entries, \(Terminal.bytes(Int64(report.removedBytes)))")
        }
    }

    /// `cache clear`.
    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")
        @OptionGroup var options: Namespace

        func run() async throws {
            let cache = options.cache
            let count = await cache.disk.count()
            await cache.clearDisk()
            print("removed \(count) entries from \(cache.disk.directory.path)")
        }
    }
}

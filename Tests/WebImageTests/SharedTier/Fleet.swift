import Foundation
import Logging
import Synchronization
@testable import WebImage
@testable import WebImageMemcached

/// "Machines" of a fleet in one process: each has its own manager, memory and disk cache and
/// tier client, and all share one origin server and the memcached nodes.
final class Fleet: Sendable {
    let origin = TestHTTPServer()
    let nodes: MemcachedNodes
    let machines: [Machine]
    let directory = TemporaryDirectory("fleet")
    let warnings: WarningLog

    final class Machine: Sendable {
        let tier: SharedCacheTier
        let cache: TieredImageCache
        let manager: ImageManager

        init(tier: SharedCacheTier, directory: URL) {
            self.tier = tier
            cache = TieredImageCache(base: ImageCache(namespace: "fleet", directory: directory, config: .init(cleanupInterval: nil)),
                                     tier: tier)
            manager = ImageManager(cache: cache, loaders: ImageLoaders([HTTPImageLoader()]))
        }
    }

    /// `machines` machines over `nodes` memcached nodes; `configure` adjusts each tier's configuration.
    init(machines count: Int, nodes nodeCount: Int = 3,
         configure: (inout SharedCacheConfiguration) -> Void = { _ in }) async throws {
        try await origin.start()
        nodes = try MemcachedNodes(count: nodeCount)
        var configuration = SharedCacheConfiguration(servers: nodes.servers, retryDelay: .seconds(1), namespace: "test")
        configure(&configuration)
        let warnings = WarningLog()
        self.warnings = warnings
        let root = directory.url
        machines = try (0..<count).map { index in
            let tier = try SharedCacheTier(configuration, logger: Logger(label: "tier-\(index)") { _ in warnings })
            return Machine(tier: tier, directory: root.appendingPathComponent("machine\(index)"))
        }
    }

    func url(_ path: String) -> URL { origin.url(path) }

    func finish() async {
        for machine in machines { await machine.manager.waitForPendingStores() }
        await origin.stop()
        nodes.stop()
        directory.remove()
    }
}

/// A log handler that keeps the warnings (the tier's one warning when a node is unreachable).
final class WarningLog: LogHandler, @unchecked Sendable {
    private let messages = Mutex<[String]>([])
    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { .warning }
        set {}
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        if event.level >= .warning { messages.withLock { $0.append("\(event.message)") } }
    }

    var warnings: [String] { messages.withLock { $0 } }
}

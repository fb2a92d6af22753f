import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A listener that must never be reached: it counts the connections made to it (and answers
/// none). A security test points what it forbids here and expects `connections == 0`.
final class Canary: Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel: Mutex<(any Channel)?> = Mutex(nil)
    private let count = Arc()

    /// The connections accepted so far.
    var connections: Int { count.value.load(ordering: .acquiring) }
    /// The port it listens on.
    var port: Int { channel.withLock { $0?.localAddress?.port ?? 0 } }

    final class Arc: Sendable { let value = Atomic<Int>(0) }

    /// Listens on `host` (a loopback address), on `port` (a free one by default).
    func start(host: String = "127.0.0.1", port: Int = 0) async throws {
        let count = self.count
        let bound = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                count.value.add(1, ordering: .releasing)
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: host, port: port).get()
        channel.withLock { $0 = bound }
    }

    func stop() async {
        let bound = channel.withLock { $0 }
        try? await bound?.close()
        try? await group.shutdownGracefully()
    }
}

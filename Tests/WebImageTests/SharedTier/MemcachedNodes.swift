import Foundation
import Glibc
import Synchronization
import WebImageMemcached

/// Real memcached servers (Debian's `memcached`) on free loopback ports, for one test: started
/// at once, killed or restarted one by one, stopped by `stop()`.
final class MemcachedNodes: Sendable {
    static let binary = "/usr/bin/memcached"
    let ports: [Int]
    private let processes: Mutex<[Process?]>

    /// Starts `count` nodes and waits until each accepts connections.
    init(count: Int) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw NodeError("memcached is not installed (Debian's memcached package; scripts/install-deps.sh installs it)")
        }
        ports = try (0..<count).map { _ in try Self.freePort() }
        processes = Mutex(Array(repeating: nil, count: count))
        for index in 0..<count { try start(index) }
    }

    var servers: [SharedCacheConfiguration.Server] { ports.map { .init(host: "127.0.0.1", port: $0) } }

    /// `host:port` of node `index`, as `SharedCacheTier.server(forKey:)` names it.
    func name(_ index: Int) -> String { "127.0.0.1:\(ports[index])" }

    /// Starts (or restarts, empty) node `index`.
    func start(_ index: Int) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        var arguments = ["-l", "127.0.0.1", "-p", "\(ports[index])", "-U", "0", "-m", "32", "-t", "1"]
        if getuid() == 0 { arguments += ["-u", "root"] }
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        processes.withLock { $0[index] = process }
        for _ in 0..<400 {
            if Self.accepts(ports[index]) { return }
            usleep(5_000)
        }
        throw NodeError("memcached on port \(ports[index]) did not start")
    }

    /// Kills node `index` (SIGKILL: no goodbye to its clients).
    func kill(_ index: Int) {
        guard let process = processes.withLock({ $0[index] }) else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        processes.withLock { $0[index] = nil }
    }

    func stop() {
        for index in ports.indices { kill(index) }
    }

    deinit { stop() }

    /// A port nothing listens on now (the kernel's pick for a socket bound to port 0).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw NodeError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    struct NodeError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

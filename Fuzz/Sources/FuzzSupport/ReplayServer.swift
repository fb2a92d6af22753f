import Foundation
import Synchronization

/// A server on 127.0.0.1 that answers every connection with the bytes it was last given, then
/// closes it: the fuzzer's input becomes an HTTP response (status line, headers, body) that the
/// real libcurl loader reads. Plain sockets on one thread of its own.
public final class ReplayServer: Sendable {
    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let reply = Mutex(Data())

    /// Starts listening at a free port, or stops the process: a fuzz target without its server
    /// cannot run.
    public init() {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else { fatalError("ReplayServer: cannot listen on 127.0.0.1") }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Sets the bytes the next connections get.
    public func answer(with bytes: Data) { reply.withLock { $0 = bytes } }

    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            // Read the request up to its blank line (or 64 KB, or 1 s of silence).
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var request = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while request.count < 65_536 {
                let count = recv(connection, &buffer, buffer.count, 0)
                if count <= 0 { break }
                request += buffer[0..<count]
                if request.count >= 4, request.suffix(4).elementsEqual([13, 10, 13, 10]) { break }
            }
            let bytes = reply.withLock { $0 }
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let sent = send(connection, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if sent <= 0 { break }
                    offset += sent
                }
            }
            close(connection)
        }
    }
}

import ArgumentParser
import Dispatch
import Foundation
import Synchronization

/// Ctrl-C, SIGTERM and SIGHUP for long commands: the first of them cancels the running work
/// (transfers are aborted, nothing half-written is left), and the command exits with 128 plus
/// the signal's number (130, 143, 129), as shells report a process killed by it.
enum Interrupt {
    private static let received = Atomic<Int32>(0)

    /// The signals that cancel the work.
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Runs `body` in a task that SIGINT, SIGTERM or SIGHUP cancels; throws `ExitCode(128 + signal)` then.
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        let sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                _ = received.compareExchange(expected: 0, desired: number, ordering: .relaxed)
                task.cancel()
            }
            source.resume()
            return source
        }
        defer { for source in sources { source.cancel() } }
        let result = await task.result
        let number = received.load(ordering: .relaxed)
        if number != 0 {
            Terminal.error(number == SIGINT ? "interrupted" : "stopped by \(number == SIGTERM ? "SIGTERM" : "SIGHUP")")
            throw ExitCode(128 + number)
        }
        return try result.get()
    }
}

import ArgumentParser
import Dispatch
import Foundation
import Synchronization

/// Ctrl-C for long commands: the first SIGINT cancels the running work (transfers are aborted,
/// nothing half-written is left), and the command exits with status 130.
enum Interrupt {
    private static let received = Atomic<Bool>(false)

    /// Runs `body` in a task that SIGINT cancels; throws `ExitCode(130)` when interrupted.
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        signal(SIGINT, SIG_IGN)
        let task = Task { try await body() }
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            received.store(true, ordering: .relaxed)
            task.cancel()
        }
        source.resume()
        defer { source.cancel() }
        let result = await task.result
        if received.load(ordering: .relaxed) {
            Terminal.error("interrupted")
            throw ExitCode(130)
        }
        return try result.get()
    }
}

import Foundation
import Synchronization

/// Runs the `webimage` executable that `swift test` built beside the test bundle.
enum CLIRunner {
    struct Output { var status: Int32; var stdout: String; var stderr: String }

    static var executable: URL? {
        let candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                          Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        let fm = FileManager.default
        return candidates.map { $0.appendingPathComponent("webimage") }.first { fm.isExecutableFile(atPath: $0.path) }
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Output {
        try start(arguments, environment: environment).wait()
    }

    /// A running `webimage`.
    // Sendable by hand: the process is only signalled and waited for; the pipes are read once.
    final class Running: @unchecked Sendable {
        let process: Process
        let out: Pipe, err: Pipe

        init(process: Process, out: Pipe, err: Pipe) {
            self.process = process
            self.out = out
            self.err = err
        }

        /// Sends a signal (SIGINT for Ctrl-C).
        func signal(_ number: Int32) { kill(process.processIdentifier, number) }

        /// Reads everything it writes and waits for it to exit.
        func wait() -> Output {
            let group = DispatchGroup()
            let collected = Mutex(Data())
            DispatchQueue.global().async(group: group) {
                let data = self.err.fileHandleForReading.readDataToEndOfFile()
                collected.withLock { $0 = data }
            }
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            group.wait()
            let stderr = collected.withLock { $0 }
            process.waitUntilExit()
            return Output(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                          stderr: String(decoding: stderr, as: UTF8.self))
        }
    }

    /// Starts `webimage` with `arguments`, and `environment` added to this process's.
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> Running {
        guard let executable else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return Running(process: process, out: out, err: err)
    }
}

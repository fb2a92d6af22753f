import Foundation
import Synchronization

/// Runs the `webimage` executable that `swift test` built beside the test bundle.
enum CLIRunner {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Standard output as bytes (an image written to `-`).
        var stdoutData = Data()
    }

    static var executable: URL? {
        let candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                          Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        let fm = FileManager.default
        return candidates.map { $0.appendingPathComponent("webimage") }.first { fm.isExecutableFile(atPath: $0.path) }
    }

    static func run(_ arguments: [String], environment: [String: String] = [:], directory: URL? = nil,
                    input: Data? = nil, executable: URL? = nil) throws -> Output {
        try start(arguments, environment: environment, directory: directory, input: input, executable: executable).wait()
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

        /// The port a `webimage serve` prints once it listens (its "listening on" line), and what
        /// it printed until then; port 0 when no such line came within about 5 s.
        func listeningPort() async throws -> (port: Int, printed: String) {
            var seen = ""
            for _ in 0..<500 {
                seen += String(decoding: err.fileHandleForReading.availableData, as: UTF8.self)
                if let range = seen.range(of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                   let port = Int(seen[range].split(separator: ":").last ?? "") {
                    return (port, seen)
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            return (0, seen)
        }

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
                          stderr: String(decoding: stderr, as: UTF8.self), stdoutData: stdout)
        }
    }

    /// Starts `webimage` with `arguments`, and `environment` added to this process's.
    /// Starts `webimage` (or `executable`) with `arguments`, `environment` added to this
    /// process's, in `directory`, with `input` on its standard input (else an empty one).
    static func start(_ arguments: [String], environment: [String: String] = [:], directory: URL? = nil,
                      input: Data? = nil, executable: URL? = nil) throws -> Running {
        guard let executable = executable ?? self.executable else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        let bytes = input ?? Data()
        // A command that exits before reading all of its input must not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        DispatchQueue.global().async {
            if !bytes.isEmpty { try? stdin.fileHandleForWriting.write(contentsOf: bytes) }
            try? stdin.fileHandleForWriting.close()
        }
        return Running(process: process, out: out, err: err)
    }
}

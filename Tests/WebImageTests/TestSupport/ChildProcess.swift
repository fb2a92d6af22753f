import Foundation

/// A child process run to its end without holding a thread of the cooperative pool: its output
/// goes to files, and the caller is resumed by the process's termination handler. A test that
/// blocked on its child (a `curl` asking this process's server, waited for with
/// `waitUntilExit`) held one of the pool's threads for the whole request; with the suites run in
/// parallel on two cores, two such tests left the server no thread to answer with, and each
/// waited for curl's own time limit.
enum ChildProcess {
    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: Data
    }

    /// Runs `executable` with `arguments` (and `environment` in place of this process's, when
    /// given), with an empty standard input, and returns its exit status and output.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> Output {
        let folder = TemporaryDirectory("child")
        defer { folder.remove() }
        let outURL = folder.url.appendingPathComponent("stdout"), errURL = folder.url.appendingPathComponent("stderr")
        guard FileManager.default.createFile(atPath: outURL.path, contents: nil),
              FileManager.default.createFile(atPath: errURL.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        return Output(status: status, stdout: try Data(contentsOf: outURL), stderr: try Data(contentsOf: errURL))
    }
}

import Foundation

/// Runs the `webimage` executable that `swift test` built beside the test bundle.
enum CLIRunner {
    struct Output { var status: Int32; var stdout: String; var stderr: String }

    static var executable: URL? {
        let candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                          Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        let fm = FileManager.default
        return candidates.map { $0.appendingPathComponent("webimage") }.first { fm.isExecutableFile(atPath: $0.path) }
    }

    static func run(_ arguments: [String]) throws -> Output {
        guard let executable else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}

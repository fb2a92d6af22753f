import Foundation
import WebImage

/// Where the CLI writes, and how numbers look.
enum Terminal {
    /// Whether standard output is a terminal (live progress bars) or a pipe or file (plain lines).
    static let isInteractive = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"

    /// Writes to standard output through the same buffer as `print`, and flushes it, so that
    /// progress lines and printed lines keep their order in a pipe.
    static func write(_ text: String) {
        print(text, terminator: "")
        fflush(nil)
    }

    /// Writes one line to standard error.
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("webimage: \(message)\n".utf8))
    }

    /// A byte count: 512 B, 12.3 KB, 4.56 MB.
    static func bytes(_ count: Int64) -> String {
        let value = Double(count)
        if value < 1000 { return "\(count) B" }
        if value < 1_000_000 { return String(format: "%.1f KB", value / 1000) }
        return String(format: "%.2f MB", value / 1_000_000)
    }

    /// A duration: 850 us, 12.3 ms, 1.24 s.
    static func duration(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds < 0.001 { return String(format: "%.0f us", seconds * 1e6) }
        if seconds < 1 { return String(format: "%.1f ms", seconds * 1000) }
        return String(format: "%.2f s", seconds)
    }

    /// Where a result came from, in words.
    static func source(_ type: ImageCacheType) -> String {
        switch type {
        case .none: "network"
        case .memory: "memory"
        case .disk: "disk"
        case .all: "cache"
        }
    }

    /// The one-line description of an error.
    static func describe(_ error: any Error) -> String {
        if let error = error as? ImageError { return error.description }
        if error is CancellationError { return "cancelled" }
        return "\(error)"
    }
}

import ArgumentParser
import Foundation
import WebImage

/// Where the CLI writes, and how numbers and errors look.
enum Terminal {
    /// Whether standard output is a terminal (live progress bars) or a pipe or file (plain lines).
    static let isInteractive = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"

    /// The terminal's width in columns (80 when it cannot be asked).
    static var columns: Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// Writes to standard output through the same buffer as `print`, and flushes it, so that
    /// progress lines and printed lines keep their order in a pipe.
    static func write(_ text: String) {
        print(text, terminator: "")
        fflush(nil)
    }

    /// Writes one line to standard error: `webimage: <message>.`, ending with exactly one full stop.
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("webimage: \(sentence(message))\n".utf8))
    }

    /// `text` ending with exactly one full stop (or its own `?` or `!`).
    static func sentence(_ text: String) -> String {
        var trimmed = Substring(text)
        while let last = trimmed.last, last == "." || last == " " || last == "\n" { trimmed = trimmed.dropLast() }
        if let last = trimmed.last, last == "?" || last == "!" { return String(trimmed) }
        return trimmed + "."
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

    /// The one-line description of an error, without a trailing full stop (callers add one).
    static func describe(_ error: any Error) -> String {
        let text: String
        if let error = error as? ImageError {
            text = error.description
        } else if error is CancellationError {
            text = "cancelled"
        } else if let error = error as? CLIError {
            text = error.description
        } else {
            text = reason(error)
        }
        return String(sentence(text).dropLast())
    }

    /// What the system said about a failed file operation, in its own words ("No space left on
    /// device", "Not a directory"), never Foundation's "NSCocoaErrorDomain error 256".
    static func reason(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))) }
        if let error = error as? CocoaError {
            let code: Int32? = switch error.code {
            case .fileNoSuchFile, .fileReadNoSuchFile: ENOENT
            case .fileReadNoPermission, .fileWriteNoPermission: EACCES
            case .fileWriteOutOfSpace: ENOSPC
            case .fileWriteVolumeReadOnly: EROFS
            case .fileWriteFileExists: EEXIST
            default: nil
            }
            if let code { return String(cString: strerror(code)) }
        }
        let text = ns.localizedFailureReason ?? ns.localizedDescription
        return text.contains("NSCocoaErrorDomain") ? "the file operation failed (error \(ns.code))" : text
    }
}

/// A failure described in one line; the command exits 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension ValidationError {
    /// A usage error whose message ends with one full stop, like every other message of the tool.
    static func sentence(_ message: String) -> ValidationError { ValidationError(Terminal.sentence(message)) }
}

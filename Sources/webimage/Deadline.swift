import Foundation
import WebImage

/// `--max-time`: a total deadline for one load, as curl's `--max-time`, given to the library as
/// the load's `ImageContext.loadTimeout` (the transfer is aborted when it passes).
enum Deadline {
    /// `context` with `seconds` as its load timeout (unchanged when nil).
    static func context(_ context: ImageContext, _ seconds: Double?) -> ImageContext {
        guard let seconds else { return context }
        var bounded = context
        bounded.loadTimeout = .milliseconds(Int64((seconds * 1000).rounded()))
        return bounded
    }

    /// The error to report: a timeout once `seconds` had passed is the deadline's, said as such;
    /// anything else (the loader's own stall timeout included) is left as it is.
    static func explain(_ error: any Error, seconds: Double?, elapsed: Duration, what: String) -> any Error {
        guard let seconds, case ImageError.timedOut = error, elapsed >= .milliseconds(Int64(seconds * 1000) - 50) else { return error }
        return CLIError("\(what) timed out after \(String(format: "%g", seconds)) s (--max-time)")
    }

    /// Checks a `--max-time` value.
    static func validate(_ seconds: Double?) -> String? {
        guard let seconds else { return nil }
        return seconds > 0 && seconds.isFinite ? nil : "--max-time must be a positive number of seconds, not \(seconds)"
    }
}

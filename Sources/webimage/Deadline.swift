import Foundation

/// `--max-time`: a total deadline for one load, as curl's `--max-time`.
enum Deadline {
    /// Runs `body`; when it has not finished after `seconds`, cancels it (the transfer is
    /// aborted) and throws `CLIError` "... timed out after N s". nil: no deadline.
    static func run<T: Sendable>(_ seconds: Double?, what: String,
                                 _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let seconds else { return try await body() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            guard let value = first else {
                throw CLIError("\(what) timed out after \(String(format: "%g", seconds)) s (--max-time)")
            }
            return value
        }
    }

    /// Checks a `--max-time` value.
    static func validate(_ seconds: Double?) -> String? {
        guard let seconds else { return nil }
        return seconds > 0 && seconds.isFinite ? nil : "--max-time must be a positive number of seconds, not \(seconds)"
    }
}

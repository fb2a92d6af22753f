import WebImage

/// `--retries N`: a URL that fails for a transient reason (a timeout, a reset, 408, 429 or 5xx)
/// is tried up to N more times, with the library's default backoff (0.5 s, then doubling) or the
/// server's `Retry-After` (as curl's `--retry`).
enum Retries {
    /// `context` with a retry strategy of `retries` retries (unchanged for 0).
    static func context(_ context: ImageContext, _ retries: Int) -> ImageContext {
        guard retries > 0 else { return context }
        var retrying = context
        retrying.retryStrategy = RetryStrategy(maxAttempts: retries + 1)
        return retrying
    }

    /// Checks a `--retries` value.
    static func validate(_ retries: Int) -> String? {
        (0...100).contains(retries) ? nil : "--retries must be between 0 and 100, not \(retries)"
    }
}

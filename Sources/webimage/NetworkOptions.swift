import ArgumentParser
import WebImage

/// The options `get` and `prefetch` share for downloading: a deadline per URL, retries and the
/// rate of new downloads.
struct NetworkOptions: ParsableArguments {
    @Option(help: "Give up on a URL after this many seconds in all (as curl's --max-time).")
    var maxTime: Double?

    @Option(help: "Try a URL up to this many more times after a transient failure (timeout, reset, 408, 429, 5xx), as curl's --retry.")
    var retries: Int = 0

    @Option(help: "Start at most N new downloads a second after a burst of 25 (N/s or N; 0: no limit).")
    var rateLimit: RateLimitOption = RateLimitOption(argument: "80")!

    func validate() throws {
        if let problem = Deadline.validate(maxTime) { throw ValidationError.sentence(problem) }
        if let problem = Retries.validate(retries) { throw ValidationError.sentence(problem) }
    }
}

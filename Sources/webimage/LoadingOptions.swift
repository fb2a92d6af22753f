import ArgumentParser
import WebImage

/// The options `get` and `prefetch` share: how each URL is loaded (deadline, retries, rate
/// limit, HTTP cache policy) and which caches it goes through (namespace, shared tier).
struct LoadingOptions: ParsableArguments {
    @Option(help: "Give up on a URL after this many seconds in all (as curl's --max-time).")
    var maxTime: Double?

    @Option(help: "Try a URL up to this many more times after a transient failure (timeout, reset, 408, 429, 5xx), as curl's --retry.")
    var retries: Int = 0

    @Option(help: "Start at most N new downloads a second after a burst of 25 (N/s or N; 0: no limit).")
    var rateLimit: RateLimitOption = RateLimitOption(argument: "80")!

    @Option(help: "A fleet's shared cache tier behind the disk cache: memcached://HOST:PORT,HOST:PORT (the port defaults to 11211). An unreachable node is a miss, not an error.")
    var sharedCache: SharedCacheOption?

    @Option(help: CachePolicyOption.help)
    var cachePolicy: CachePolicyOption = .respect

    @Option(help: "The cache namespace: a plain name (no '/', no leading dot).")
    var namespace: String = "cli"

    func validate() throws {
        if let problem = Deadline.validate(maxTime) { throw ValidationError.sentence(problem) }
        if let problem = Retries.validate(retries) { throw ValidationError.sentence(problem) }
        try CacheNamespace.validate(namespace)
    }

    /// A manager over `cache` (the namespace's, with the shared tier behind it when one was
    /// given), with the rate limit and the cache policy.
    func manager(cache: ImageCache) throws -> ImageManager {
        var configuration = rateLimit.configuration
        configuration.defaultContext.httpCachePolicy = cachePolicy.policy
        return ImageManager(cache: try SharedCacheOption.cache(cache, tier: sharedCache), configuration: configuration)
    }

    /// `context` with the retries (the deadline is added per load: see `Deadline`).
    func context(_ context: ImageContext) -> ImageContext { Retries.context(context, retries) }
}

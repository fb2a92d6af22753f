import Foundation

extension ImageManager {
    /// What a manager does when a call does not say (SDWebImageManager's properties and
    /// `SDWebImageManagerDelegate`). A call's context beats `defaultContext`, which beats the
    /// fields below, which beat the library defaults.
    public struct Configuration: Sendable {
        /// Added to every call's options.
        public var defaultOptions: ImageOptions = []
        /// Supplies every field a call's context leaves nil.
        public var defaultContext = ImageContext()
        /// Rewrites each call's options and context (after defaults are applied, before anything else).
        /// It should give the same answer for the same URL, options and context: calls that agree
        /// before it runs may share work.
        public var optionsProcessor: (@Sendable (URL, ImageOptions, ImageContext) -> (ImageOptions, ImageContext))?
        /// Steps around every image call, in order, outside a call's own
        /// (`ImageContext.interceptors`; see `ImageInterceptor`).
        public var interceptors: [any ImageInterceptor] = []
        /// The cache-key filter used when the context has none.
        public var cacheKeyFilter: CacheKeyFilter?
        /// The cache serializer used when the context has none.
        public var cacheSerializer: CacheSerializer?
        /// The transformer used when the context has none.
        public var transformer: (any ImageTransformer)?
        /// Asked before downloading a URL that no cache holds; false fails with
        /// `ImageError.downloadNotAllowed` (or returns the cached image with `.refreshCached`).
        public var shouldDownload: (@Sendable (URL) -> Bool)?
        /// Decides whether a failure blacklists the URL, replacing the built-in rule
        /// (`ImageManager.isPermanentFailure(_:)`).
        public var shouldBlockFailedURL: (@Sendable (URL, any Error) -> Bool)?

        /// How many loads that missed the memory cache run at once (disk query, transfer,
        /// decode, transform, store), 64 by default; the others wait, by priority (in the
        /// order of the HTTP loader's queue within a level), holding no task until they start.
        /// Callers of a key that waits join it as usual. A burst of thousands of distinct calls
        /// then costs each waiting call a few hundred bytes instead of the task memory of a
        /// running load (see `SoakBenchmarks`). The loader's and the decoder's own limits apply
        /// within this one; keep it several times `maximumConcurrentDownloads`.
        public var maximumConcurrentLoads = 64

        /// The token bucket every new transfer to a remote loader passes (Nuke's rate limiter,
        /// with its figures: 80 a second after bursts of 25); nil turns it off. Memory and disk
        /// hits and callers joining work in flight take no token. Each configuration made with
        /// the default gets its own limiter; give managers one instance to share a bucket.
        public var rateLimiter: RateLimiter? = RateLimiter()

        /// The clock HTTP freshness is reckoned by (`HTTPCachePolicy.respectHeaders`): when a
        /// response arrived and whether a cached one is still fresh. The system's by default; a
        /// test gives one it can move.
        public var currentDate: @Sendable () -> Date = { Date() }

        /// The defaults: no options, an empty context, no hooks.
        public init() {}

        /// The default context with the configuration-level plug-ins filled in.
        var effectiveDefaults: ImageContext {
            var defaults = defaultContext
            if defaults.cacheKeyFilter == nil { defaults.cacheKeyFilter = cacheKeyFilter }
            if defaults.cacheSerializer == nil { defaults.cacheSerializer = cacheSerializer }
            if defaults.transformer == nil { defaults.transformer = transformer }
            return defaults
        }
    }
}

/// Whether the disk cache follows the origin's caching headers (RFC 9111, as a private cache),
/// per manager (`ImageContext.httpCachePolicy` in its default context) or per call.
///
/// The peers: Nuke's default pipeline stores through `URLCache`, which follows the headers, and
/// its aggressive `DataCache` ignores them; SDWebImage ignores them unless `.useNSURLCache`;
/// Kingfisher ignores them and keeps its own expiration; Coil has `CacheControlCacheStrategy`.
public enum HTTPCachePolicy: Sendable, Hashable {
    /// The entry stays until the disk cache's own age and size limits remove it; it is asked
    /// again only with `.refreshCached`. `no-store` responses are written too.
    case ignoreHeaders
    /// The default. Freshness from `Cache-Control: max-age`, `Expires`, `Date` and `Age` (10% of
    /// the time since `Last-Modified`, at most a week, when the origin gives neither); a stale,
    /// `no-cache` or `must-revalidate` entry is revalidated with its stored validators before
    /// use (a 304 keeps the body and refreshes the freshness); within `stale-while-revalidate` a
    /// stale entry is served at once and revalidated once in the background. `no-store`,
    /// `Vary: *`, and a `Vary` whose headers a request modifier may change, are never written to
    /// disk (the decoded image may still go to memory). A response that says nothing about
    /// freshness is kept as with `.ignoreHeaders`. The memory cache keeps decoded images under
    /// its own limits (as Nuke's, SDWebImage's and Kingfisher's memory caches do).
    case respectHeaders
}

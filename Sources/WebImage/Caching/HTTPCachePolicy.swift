import Foundation

/// Whether the disk cache follows the origin's caching headers (RFC 9111, as a private cache),
/// per manager (`ImageContext.httpCachePolicy` in its default context) or per call.
///
/// The peers: Nuke's default pipeline stores through `URLCache`, which follows the headers, and
/// its aggressive `DataCache` ignores them; SDWebImage ignores them unless `.useNSURLCache`;
/// Kingfisher ignores them and keeps its own expiration; Coil has `CacheControlCacheStrategy`.
/// Its raw values (`"ignore"`, `"respect"`) are what configuration files and the CLI's
/// `--cache-policy` spell.
public enum HTTPCachePolicy: String, Sendable, Hashable, Codable {
    /// The entry stays until the disk cache's own age and size limits remove it; it is asked
    /// again only with `.refreshCached`. `no-store` responses are written too.
    case ignoreHeaders = "ignore"
    /// The default. Freshness from `Cache-Control: max-age`, `Expires`, `Date` and `Age` (10% of
    /// the time since `Last-Modified`, at most a week, when the origin gives neither); a stale,
    /// `no-cache` or `must-revalidate` entry is revalidated with its stored validators before
    /// use (a 304 keeps the body and refreshes the freshness); within `stale-while-revalidate` a
    /// stale entry is served at once and revalidated once in the background. `no-store`,
    /// `Vary: *`, and a `Vary` whose headers a request modifier may change, are never written to
    /// disk (the decoded image may still go to memory). A response that says nothing about
    /// freshness is kept as with `.ignoreHeaders`. A decoded image stays in memory only while
    /// its response is fresh (with a cache that answers memory synchronously, as `ImageCache`);
    /// `no-store` and `no-cache` images are not kept there.
    case respectHeaders = "respect"
    /// As `.respectHeaders`, for a cache shared between users, as an image proxy's is (RFC 9111
    /// §3, §5.2.2): `s-maxage` is the lifetime over `max-age` and `Expires` and implies
    /// `proxy-revalidate`, which counts as `must-revalidate`; a `private` response, or one with
    /// `Vary: *`, is fetched and decoded but kept in no cache, memory included (its
    /// `ImageResult.freshness` says `isPrivate`, or `noStore` for `Vary: *`).
    case respectHeadersShared = "shared"

    /// Whether the origin's caching headers are followed (`.respectHeaders` or `.respectHeadersShared`).
    public var respectsHeaders: Bool { self != .ignoreHeaders }
}

/// The origin's caching rules for one image, reckoned when its result was made
/// (`ImageResult.freshness`).
public struct HTTPFreshness: Sendable, Equatable {
    /// When these were reckoned (the manager's clock).
    public var date: Date
    /// How many more seconds from `date` the image is fresh; nil when the origin said nothing
    /// (0 when it is stale, or must be revalidated on every use).
    public var lifetime: Double?
    /// `no-store`: not to be kept by any cache.
    public var noStore: Bool
    /// `no-cache`: to be revalidated before every use.
    public var noCache: Bool
    /// `private`: meant for one user's cache; a shared cache passes it on as `private`.
    public var isPrivate = false
    /// The source's `ETag`, when it sent one: equal validators mean the same source bytes.
    public var etag: String?
    /// The source's `Last-Modified`, when it sent one.
    public var lastModified: String?

    /// Rules; every argument has the documented meaning.
    public init(date: Date, lifetime: Double?, noStore: Bool = false, noCache: Bool = false) {
        self.date = date
        self.lifetime = lifetime
        self.noStore = noStore
        self.noCache = noCache
    }

    /// A `Cache-Control` value for a response that passes this image on: `no-store`,
    /// `no-cache` (`private, no-cache`), or `public, max-age=` (`private, max-age=` for a private
    /// source) the smaller of `maxAge` and the time left at `now`.
    public func cacheControl(cappedAt maxAge: Int, now: Date = Date()) -> String {
        if noStore { return "no-store" }
        let scope = isPrivate ? "private" : "public"
        if noCache { return isPrivate ? "private, no-cache" : "no-cache" }
        guard lifetime != nil else { return "\(scope), max-age=\(maxAge)" }
        return "\(scope), max-age=\(min(maxAge, secondsLeft(at: now) ?? maxAge))"
    }

    /// Whole seconds of freshness left at `now` (0 once stale); nil when the origin said nothing.
    public func secondsLeft(at now: Date = Date()) -> Int? {
        guard let lifetime else { return nil }
        let left = max(0, lifetime - max(0, now.timeIntervalSince(date)))
        return Int(min(left, Double(Int32.max)).rounded(.down))
    }
}

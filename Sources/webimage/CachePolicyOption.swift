import ArgumentParser
import WebImage

/// `--cache-policy respect|ignore`: whether the disk cache follows the origin's caching headers
/// (`HTTPCachePolicy`); respect by default.
enum CachePolicyOption: String, ExpressibleByArgument, CaseIterable, Sendable {
    case respect, ignore

    /// The library's policy.
    var policy: HTTPCachePolicy { self == .respect ? .respectHeaders : .ignoreHeaders }

    /// The help text every command shows.
    static let help: ArgumentHelp = "Follow the origin's Cache-Control, Expires and Vary (respect: revalidate stale entries, keep no-store ones nowhere) or keep every entry until the cache's own limits (ignore)."
}

import CCurl
import Foundation

/// A URL as the HTTP loader will request it, read by libcurl's own URL parser (`curl_url`): dot
/// segments removed, scheme and host lowercased, a default port dropped. A rule about which URLs
/// may be loaded (an allowlist of hosts or prefixes) compares this form, never the raw text, so
/// that what it judges is what libcurl sends: `http://origin/f/../x` is `http://origin/x`, and
/// `http://origin\@evil/` is a request to `evil`.
public struct NormalizedURL: Sendable, Hashable, CustomStringConvertible {
    /// The scheme, lowercased.
    public let scheme: String
    /// The host, lowercased (an IPv6 address in brackets); empty when there is none.
    public let host: String
    /// The port when it is not the scheme's default.
    public let port: Int?
    /// The path, dot segments removed, percent-encoding as written.
    public let path: String
    /// The query, if any.
    public let query: String?
    /// Whether the URL carries a user name or password.
    public let hasCredentials: Bool
    /// The whole URL in this form (no fragment).
    public let description: String

    /// `text` as libcurl reads it; nil when libcurl refuses it.
    public init?(_ text: String) {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, text, 0) == CURLUE_OK else { return nil }
        func part(_ which: CURLUPart, _ flags: UInt32 = 0) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &value, flags) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        guard let scheme = part(CURLUPART_SCHEME) else { return nil }
        self.scheme = scheme.lowercased()
        host = part(CURLUPART_HOST)?.lowercased() ?? ""
        port = part(CURLUPART_PORT, UInt32(CURLU_NO_DEFAULT_PORT)).flatMap { Int($0) }
        path = part(CURLUPART_PATH) ?? "/"
        query = part(CURLUPART_QUERY)
        hasCredentials = part(CURLUPART_USER) != nil || part(CURLUPART_PASSWORD) != nil
        var text = self.scheme + "://" + host
        if let port { text += ":\(port)" }
        text += path
        if let query { text += "?" + query }
        description = text
    }

    /// The URL's form as the loader requests `url`.
    public init?(_ url: URL) { self.init(url.absoluteString) }

    /// The path as the most lenient server could read it: `%2e` as `.`, `%2f`, `%5c` and `\` as
    /// `/`, then dot segments removed again. A prefix rule that holds for both `path` and this
    /// holds however the origin decodes the path (`/f/%2e%2e/x` and `/f/..%2fx` leave `/f/`
    /// there).
    public var leniently: String {
        var decoded = ""
        var index = path.startIndex
        while index < path.endIndex {
            let rest = path[index...]
            if rest.hasPrefix("%") && rest.count >= 3 {
                let code = rest.dropFirst().prefix(2).lowercased()
                if code == "2e" { decoded += "."; index = path.index(index, offsetBy: 3); continue }
                if code == "2f" || code == "5c" { decoded += "/"; index = path.index(index, offsetBy: 3); continue }
            }
            decoded.append(path[index] == "\\" ? "/" : path[index])
            index = path.index(after: index)
        }
        // libcurl removes the dot segments of the decoded path, as it did of the written one.
        return NormalizedURL("http://h" + (decoded.hasPrefix("/") ? "" : "/") + decoded)?.path ?? decoded
    }

    /// Whether this URL lies under `prefix` (same scheme, host and port; the path starts with
    /// the prefix's path however the origin decodes it; the prefix's query, if any, is ignored).
    public func isUnder(_ prefix: NormalizedURL) -> Bool {
        scheme == prefix.scheme && host == prefix.host && port == prefix.port
            && path.hasPrefix(prefix.path) && leniently.hasPrefix(prefix.path)
    }
}

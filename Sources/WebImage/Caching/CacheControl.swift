/// The directives of a response's `Cache-Control` that a cache acts on (RFC 9111 §5.2.2),
/// read leniently: names in any case, an argument quoted or not. A directive given twice with
/// different arguments counts as its most restrictive (the smaller delta; RFC 9111 §4.2.1).
/// A `max-age` whose argument is not a non-negative integer makes the response stale (0);
/// one too large to hold is 2^31 seconds (RFC 9111 §1.2.2).
struct CacheControl: Sendable, Equatable {
    var maxAge: Int?
    var staleWhileRevalidate: Int?
    var noStore = false
    var noCache = false
    var mustRevalidate = false
    /// `s-maxage`: a shared cache's lifetime, over `max-age` and `Expires` (RFC 9111 §5.2.2.10).
    var sharedMaxAge: Int?
    /// `proxy-revalidate`: `must-revalidate` for shared caches only (§5.2.2.8).
    var proxyRevalidate = false
    /// `private`: for one user's cache; a shared cache does not store it (§5.2.2.7). With
    /// field names (a qualified `private`) it is still not stored: stricter.
    var isPrivate = false

    /// The largest delta RFC 9111 asks a cache to hold.
    static let largestDelta = 1 << 31

    /// The directives of a header value (several header lines arrive joined with commas).
    init(_ value: String?) {
        guard let value else { return }
        for directive in CacheControl.split(value) {
            let (name, argument) = CacheControl.nameAndArgument(directive)
            switch name {
            case "max-age": maxAge = CacheControl.smaller(maxAge, CacheControl.delta(argument) ?? 0)
            case "stale-while-revalidate":
                // An unreadable window gives no window: serving stale is an allowance, never assumed.
                staleWhileRevalidate = CacheControl.smaller(staleWhileRevalidate, CacheControl.delta(argument) ?? 0)
            case "no-store": noStore = true
            case "no-cache": noCache = true   // with field names (a qualified no-cache) it still revalidates: stricter
            case "s-maxage": sharedMaxAge = CacheControl.smaller(sharedMaxAge, CacheControl.delta(argument) ?? 0)
            case "must-revalidate": mustRevalidate = true
            case "proxy-revalidate": proxyRevalidate = true
            case "private": isPrivate = true
            default: break
            }
        }
    }

    private static func smaller(_ old: Int?, _ new: Int) -> Int { old.map { min($0, new) } ?? new }

    /// `value` split at commas outside quoted strings.
    static func split(_ value: String) -> [Substring] {
        var parts: [Substring] = []
        var start = value.startIndex, quoted = false, escaped = false
        var index = value.startIndex
        while index < value.endIndex {
            let c = value[index]
            if escaped {
                escaped = false
            } else if quoted, c == "\\" {
                escaped = true
            } else if c == "\"" {
                quoted.toggle()
            } else if c == ",", !quoted {
                parts.append(value[start..<index])
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        parts.append(value[start...])
        return parts
    }

    /// A directive's lowercased name and its argument without quotes.
    static func nameAndArgument(_ directive: Substring) -> (String, Substring?) {
        let trimmed = directive.trimmingSpaces
        guard let equals = trimmed.firstIndex(of: "=") else { return (trimmed.lowercased(), nil) }
        var argument = trimmed[trimmed.index(after: equals)...].trimmingSpaces
        if argument.count >= 2, argument.first == "\"", argument.last == "\"" {
            argument = argument.dropFirst().dropLast()
        }
        return (trimmed[..<equals].trimmingSpaces.lowercased(), argument)
    }

    /// A delta-seconds argument: digits only; nil when it is not one; capped at 2^31.
    static func delta(_ argument: Substring?) -> Int? {
        guard let argument, !argument.isEmpty, argument.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(argument).map { min($0, largestDelta) } ?? largestDelta
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        var s = self
        while let first = s.first, first == " " || first == "\t" { s.removeFirst() }
        while let last = s.last, last == " " || last == "\t" { s.removeLast() }
        return s
    }
}

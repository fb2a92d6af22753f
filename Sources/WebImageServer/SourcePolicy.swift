import Foundation

/// Which source URLs the server fetches: http and https only, and, when the configuration lists
/// any, only those whose host or prefix it names. (Which addresses the fetch may reach is the
/// loader's `AddressPolicy`, checked on the connection itself.)
struct SourcePolicy: Sendable {
    let allowed: [String]

    /// Why `url` is refused, or nil when it may be fetched.
    func refusal(_ url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return "only http and https sources are fetched"
        }
        guard let host = url.host?.lowercased(), !host.isEmpty else { return "the source has no host" }
        if url.user != nil || url.password != nil { return "sources with credentials are not fetched" }
        guard !allowed.isEmpty else { return nil }
        let text = url.absoluteString
        for entry in allowed {
            let entry = entry.lowercased()
            if entry.contains("://") {
                if text.lowercased().hasPrefix(entry) { return nil }
            } else if entry.hasPrefix("*.") {
                if host.hasSuffix(String(entry.dropFirst())) { return nil }
            } else if host == entry {
                return nil
            }
        }
        return "the source's host is not in the allowed sources"
    }
}

import Foundation

/// Which source URLs the server fetches: http and https only, and, when the configuration lists
/// any, only those whose host or prefix it names; `local:///PATH` within the file root when one
/// is configured. (Which addresses the fetch may reach is the loader's `AddressPolicy`, checked
/// on the connection itself.)
struct SourcePolicy: Sendable {
    let allowed: [String]
    /// The file root, resolved (no symbolic link, no trailing slash); nil: no local files.
    let fileRoot: String?

    init(allowed: [String], fileRoot: String?) {
        self.allowed = allowed
        self.fileRoot = fileRoot.flatMap(Self.resolve)
    }

    /// The file a `local:///PATH` source names within the root, or the refusal.
    func localFile(_ url: URL) -> Result<URL, ProcessingRequestError> {
        guard let root = fileRoot else { return .failure(ProcessingRequestError(403, "local files are not served (no fileRoot is configured)")) }
        let path = url.path(percentEncoded: false)
        guard !path.isEmpty, !path.contains("\0") else { return .failure(ProcessingRequestError(400, "the local source has no path")) }
        guard let resolved = Self.resolve(root + "/" + path) else { return .failure(ProcessingRequestError(404, "no such local file")) }
        guard resolved.hasPrefix(root + "/") else { return .failure(ProcessingRequestError(403, "the local path leaves the file root")) }
        return .success(URL(fileURLWithPath: resolved))
    }

    /// The path with `..` and symbolic links resolved, or nil when it does not exist.
    static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

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

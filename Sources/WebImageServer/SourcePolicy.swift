import Foundation
import WebImage

/// Which source URLs the server fetches: http and https only, and, when the configuration lists
/// any, only those whose host or prefix it names; `local:///PATH` within the file root when one
/// is configured. (Which addresses the fetch may reach is the loader's `AddressPolicy`, checked
/// on the connection itself.)
struct SourcePolicy: Sendable {
    let allowed: [String]
    /// `allowed`, read.
    let rules: [Rule]
    /// The file root, resolved (no symbolic link, no trailing slash); nil: no local files.
    let fileRoot: String?

    init(allowed: [String], fileRoot: String?) {
        self.allowed = allowed
        rules = allowed.map(Rule.init)
        self.fileRoot = fileRoot.flatMap(Self.resolve)
    }

    /// The file a `local:///PATH` source names within the root, or the refusal.
    func localFile(_ url: URL) -> Result<URL, ProcessingRequestError> {
        guard let root = fileRoot else { return .failure(ProcessingRequestError(403, "local files are not served (no fileRoot is configured)")) }
        let path = url.path(percentEncoded: false)
        guard !path.isEmpty, !path.contains("\0") else { return .failure(ProcessingRequestError(400, "the local source has no path")) }
        guard let resolved = Self.resolve(root + "/" + path) else { return .failure(ProcessingRequestError(404, "no such local file")) }
        guard resolved.hasPrefix(root + "/") else { return .failure(ProcessingRequestError(403, "the local path leaves the file root")) }
        // A folder, FIFO, socket or device is no image (the loader checks again on the open file).
        var status = stat()
        guard stat(resolved, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            return .failure(ProcessingRequestError(404, "no such local file"))
        }
        return .success(URL(fileURLWithPath: resolved))
    }

    /// The path with `..` and symbolic links resolved, or nil when it does not exist.
    static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Why `url` is refused, or nil when it may be fetched. Judged on the URL as libcurl will
    /// request it (`NormalizedURL`), not on its text: a prefix holds only when both the written
    /// path and its most lenient decoding stay under it. The loader asks again for every
    /// redirect (`redirectFilter`), so the rule holds for each hop.
    func refusal(_ url: URL) -> String? {
        guard let target = NormalizedURL(url) else { return "the source is not a URL the server fetches" }
        guard target.scheme == "http" || target.scheme == "https" else { return "only http and https sources are fetched" }
        guard !target.host.isEmpty else { return "the source has no host" }
        if target.hasCredentials { return "sources with credentials are not fetched" }
        guard !rules.isEmpty else { return nil }
        for rule in rules {
            switch rule {
            case .prefix(let prefix): if target.isUnder(prefix) { return nil }
            case .domain(let suffix): if target.host.hasSuffix(suffix) { return nil }
            case .host(let host): if target.host == host { return nil }
            case .unusable: continue
            }
        }
        return "the source is not in the allowed sources"
    }

    /// One entry of `allowedSources`, read once.
    enum Rule: Sendable {
        /// `https://cdn.example.com/photos/`: URLs under it.
        case prefix(NormalizedURL)
        /// `*.example.com`: hosts ending in `.example.com`.
        case domain(String)
        /// `images.example.com`: that host.
        case host(String)
        /// A prefix libcurl cannot read: matches nothing.
        case unusable

        init(_ entry: String) {
            let entry = entry.lowercased()
            if entry.contains("://") {
                self = NormalizedURL(entry).map(Rule.prefix) ?? .unusable
            } else if entry.hasPrefix("*.") {
                self = .domain(String(entry.dropFirst()))
            } else {
                self = .host(entry)
            }
        }
    }
}

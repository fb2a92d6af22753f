import Foundation

/// HTTP validators kept beside a cached image so that `.refreshCached` can ask the server
/// whether it changed (a 304 keeps the cached image).
struct CacheValidators: Sendable, Equatable {
    var etag: String?
    var lastModified: String?

    init?(etag: String?, lastModified: String?) {
        guard etag != nil || lastModified != nil else { return nil }
        self.etag = etag
        self.lastModified = lastModified
    }

    /// From a response's headers (lowercase names).
    init?(headers: [String: String]) {
        self.init(etag: headers["etag"], lastModified: headers["last-modified"])
    }

    /// Stored as two lines: the ETag and the Last-Modified date (either may be empty).
    init?(stored: Data) {
        let lines = String(decoding: stored, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 3, lines[0] == "webimage-validators" else { return nil }
        self.init(etag: lines[1].isEmpty ? nil : String(lines[1]), lastModified: lines[2].isEmpty ? nil : String(lines[2]))
    }

    var stored: Data { Data("webimage-validators\n\(etag ?? "")\n\(lastModified ?? "")".utf8) }
}

import Foundation

/// HTTP validators kept beside a cached image so that `.refreshCached` can ask the server
/// whether it changed (a 304 keeps the cached image).
struct CacheValidators: Sendable, Equatable {
    var etag: String?
    var lastModified: String?

    /// A value with a line break or NUL is dropped: it would end the request header it is
    /// sent in and start another (a damaged or planted cache file must not inject headers).
    init?(etag: String?, lastModified: String?) {
        func clean(_ value: String?) -> String? {
            // Scanned as contiguous bytes: the UTF-8 view's iterator is not, and it runs on every revalidation.
            guard var value else { return nil }
            return value.withUTF8 { $0.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } } ? nil : value
        }
        self.etag = clean(etag)
        self.lastModified = clean(lastModified)
        guard self.etag != nil || self.lastModified != nil else { return nil }
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

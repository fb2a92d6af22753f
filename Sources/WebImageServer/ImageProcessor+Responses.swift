import Foundation
import NIOCore
import WebImage

/// The encoded results kept in memory: their keys (the path, and the format `Accept` chose for
/// `f:auto`), warm answers, and the revalidation of stale ones.
extension ImageProcessor {
    /// Whether a registered coder writes `format`.
    static func canEncode(_ format: ImageFormat) -> Bool { ImageCoders.shared.all.contains { $0.canEncode(format) } }

    /// The format `f:auto` gives for `accept`: of `order`, the one whose MIME type it names
    /// with the highest weight above 0 (the earlier of equals), else nil (the source's format).
    static func autoFormat(accept: String?, order: [ImageFormat]) -> ImageFormat? {
        guard let accept else { return nil }
        return AcceptedTypes(accept).preferred(among: order) { $0.mimeType }
    }

    /// The response cache's key of a request path, as it came (signature, options, source),
    /// before any parsing: equal paths ask for the same result, so a warm request is answered
    /// without parsing or checking it again (it was checked when it was made). The format that
    /// `Accept` chooses is part of it only when the path may ask for `f:auto`: it names it, or
    /// names a preset when one of `presetsChoose` does so (`presetsChoose` `.always`: the
    /// default preset does).
    static func responseKey(path: String, accept: String?, autoFormats: [ImageFormat], presetsChoose: AutoInPresets = .never) -> String {
        let auto = contains(path, "f:auto") || contains(path, "format:auto") || contains(path, "ext:auto")
            || presetsChoose == .always || (presetsChoose == .whenNamed && (contains(path, "pr:") || contains(path, "preset:")))
        guard auto else { return path }
        return path + "|" + (autoFormat(accept: accept, order: autoFormats)?.rawValue ?? "source")
    }

    /// Whether the configured presets ask for `f:auto`.
    enum AutoInPresets: Sendable {
        /// None does.
        case never
        /// One does: a path that names a preset may.
        case whenNamed
        /// The default preset does: every path may.
        case always

        /// What `presets` (names to option paths) say.
        init(_ presets: [String: String]) {
            func auto(_ options: String) -> Bool {
                options.split(separator: "/").contains { ["f:auto", "format:auto", "ext:auto"].contains($0) }
            }
            if presets["default"].map(auto) == true { self = .always } else { self = presets.values.contains(where: auto) ? .whenNamed : .never }
        }
    }

    /// `responseKey(path:accept:autoFormats:presetsChoose:)` with this server's `f:auto` order and presets.
    func responseKey(path: String, accept: String?) -> String {
        Self.responseKey(path: path, accept: accept, autoFormats: autoFormats, presetsChoose: defaults.autoInPresets)
    }

    /// Whether `text` holds `part`: its first byte found by the C library's `memchr`, the rest
    /// compared by `memcmp` (Foundation's `contains` goes through NSString, and a loop over the
    /// bytes in Swift costs several times more; see Benchmarks/README.md, issue #56).
    static func contains(_ text: String, _ part: StaticString) -> Bool {
        let needle = UnsafeRawPointer(part.utf8Start), count = part.utf8CodeUnitCount
        guard count > 0 else { return true }
        let first = Int32(part.utf8Start.pointee)
        func search(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let base = bytes.baseAddress, bytes.count >= count else { return false }
            var from = UnsafeRawPointer(base), left = bytes.count
            while left >= count, let found = memchr(from, first, left - count + 1) {
                let at = UnsafeRawPointer(found)
                if memcmp(at, needle, count) == 0 { return true }
                left -= at - from + 1
                from = at + 1
            }
            return false
        }
        // One route: `withUTF8` makes a bridged or non-contiguous string native first.
        var text = text
        return text.withUTF8(search)
    }

    /// What the response cache holds for a key.
    enum CachedResponse {
        /// The result of an earlier request of the same key, fresh.
        case fresh(ProcessedImage)
        /// One whose source's freshness ended: `revalidated(_:forKey:)` may keep it.
        case stale(ResponseCache.Entry)
    }

    /// The result of an earlier request of the same key, if the response cache still has it.
    func cachedResponse(forKey key: String) -> CachedResponse? {
        switch responses.entry(forKey: key) {
        case .fresh(let entry)?: .fresh(Self.answer(entry, source: "response"))
        case .stale(let entry)?: .stale(entry)
        case nil: nil
        }
    }

    private static func answer(_ entry: ResponseCache.Entry, source: String) -> ProcessedImage {
        ProcessedImage(body: entry.body, contentType: entry.contentType, etag: entry.etag, variesWithAccept: entry.variesWithAccept,
                       source: source, freshness: entry.freshness, disposition: entry.disposition)
    }

    /// A stale result kept, when its source is unchanged: the source's disk entry is
    /// revalidated (one conditional request; a 304 refreshes it) and its validators compared
    /// with those the result was made from. Nil when the source changed or cannot be checked:
    /// the result is made again.
    func revalidated(_ entry: ResponseCache.Entry, forKey key: String) async -> ProcessedImage? {
        guard let check = entry.source, let made = entry.freshness else { return nil }
        var context = ImageContext()
        context.colorSpace = check.colorSpace
        guard let (_, now) = try? await manager.dataWithFreshness(for: check.url, context: context), let now,
              now.etag == made.etag, now.lastModified == made.lastModified else { return nil }
        var refreshed = entry
        refreshed.freshness = sourceFreshness.note(now, for: check.url)
        refreshed.expires = ResponseCache.Entry.expiry(of: now)
        responses.store(refreshed, forKey: key)
        return Self.answer(refreshed, source: "revalidated")
    }
}

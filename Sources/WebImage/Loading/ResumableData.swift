import Foundation
import Synchronization

/// Partial bodies of transfers that failed or were cancelled midway, kept so that the next
/// transfer of the same URL continues where they stopped (Nuke's `ResumableData`): it asks for
/// the rest with `Range` and `If-Range`; a 206 continues the body, a 200 (the image changed)
/// starts again. Only bodies whose response allowed it are kept: `Accept-Ranges: bytes` and a
/// strong `ETag` or a `Last-Modified` date. Bounded by `limit` bytes in all, the oldest going first.
final class ResumableDataStore: Sendable {
    /// A partial body and the validator it must still match.
    struct Entry: Sendable {
        let data: Data
        let validator: String
    }
    private struct State {
        var entries: [String: Entry] = [:]
        var order: [String] = []
        var bytes = 0
    }
    private let state = Mutex(State())
    /// The most bytes kept in all.
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Bytes kept now.
    var bytes: Int { state.withLock { $0.bytes } }

    /// Takes the partial body kept for `url`, if any (a transfer that continues it owns it).
    func take(_ url: String) -> Entry? {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: url) else { return nil }
            state.order.removeAll { $0 == url }
            state.bytes -= entry.data.count
            return entry
        }
    }

    /// Keeps `entry` for `url` (replacing an older one), dropping the oldest while over the limit.
    func store(_ entry: Entry, for url: String) {
        guard entry.data.count <= limit, !entry.data.isEmpty else { return }
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: url) {
                state.order.removeAll { $0 == url }
                state.bytes -= old.data.count
            }
            state.entries[url] = entry
            state.order.append(url)
            state.bytes += entry.data.count
            while state.bytes > limit, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.bytes -= state.entries.removeValue(forKey: oldest)?.data.count ?? 0
            }
        }
    }

    /// The validator a response allows resuming with: a strong ETag, else Last-Modified; nil
    /// when the server does not take byte ranges.
    static func validator(of response: ImageLoaderResponse) -> String? {
        guard let ranges = response.headers["accept-ranges"], ranges.lowercased().contains("bytes") else { return nil }
        if let etag = response.headers["etag"], !etag.hasPrefix("W/") { return etag }
        return response.headers["last-modified"]
    }

    /// The first byte and the total length of a `Content-Range: bytes first-last/total` value.
    static func contentRange(_ value: String?) -> (first: Int, total: Int64?)? {
        guard let value, value.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard let range = parts.first, let first = range.split(separator: "-").first.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
        else { return nil }
        let total = parts.count == 2 ? Int64(parts[1].trimmingCharacters(in: .whitespaces)) : nil
        return (first, total)
    }
}

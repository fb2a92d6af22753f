import Foundation
import NIOCore
import Synchronization
import WebImage

/// Encoded results in memory, least recently used first out, within a byte budget: a warm
/// request is answered from here with no decode and no encode. A result whose source's
/// freshness ended stays (until evicted) as stale: it is answered again once its source is
/// revalidated and found unchanged (RFC 9111 §4.3: a 304 keeps what was made from it).
final class ResponseCache: Sendable {
    /// What a look-up found.
    enum Lookup: Sendable {
        /// Served as it is.
        case fresh(Entry)
        /// Its source's freshness ended: served only once the source is known unchanged.
        case stale(Entry)
    }

    struct Entry: Sendable {
        /// The bytes as NIO sends them: every response shares this storage, nothing is copied.
        let body: ByteBuffer
        let contentType: String
        let etag: String
        let variesWithAccept: Bool
        /// The origin's caching rules for the source (nil: unknown, the configured max-age).
        var freshness: HTTPFreshness? = nil
        /// When the entry stops being served (its source's freshness ends); nil: kept until evicted.
        var expires: ContinuousClock.Instant? = nil
        /// The source it was made from, and the colour space it was read in: what a stale
        /// entry's revalidation asks for.
        var source: SourceCheck? = nil
        /// `Content-Disposition`, when the request asked for a file name or an attachment.
        var disposition: String? = nil
        /// When the URL itself stops being served (`exp:`): the entry is dropped then, and the
        /// request is parsed again (and refused).
        var urlExpiry: ContinuousClock.Instant? = nil

        /// What the entry holds in memory: its body's storage, which NIO allocates in powers of
        /// two (a 70 KB result takes 128 KB), not only its bytes; the budget counts this.
        var cost: Int { body.capacity }

        /// Whether a response may be kept at all: not when its source may not be stored, is
        /// private (a shared cache keeps it nowhere), or must be revalidated on every use.
        var isKeepable: Bool { !(freshness?.noStore ?? false) && !(freshness?.noCache ?? false) && !(freshness?.isPrivate ?? false) }

        /// Whether the source's validators (ETag, Last-Modified) are known: only then can a
        /// stale entry be found unchanged.
        var isRevalidatable: Bool { source != nil && (freshness?.etag != nil || freshness?.lastModified != nil) }

        /// When an entry made from a source with `freshness` stops being served fresh.
        static func expiry(of freshness: HTTPFreshness?) -> ContinuousClock.Instant? {
            freshness?.lifetime.map { .now + .milliseconds(Int64(min($0, 1e12) * 1000)) }
        }
    }

    /// A result's source, as its stale entry's revalidation asks for it.
    struct SourceCheck: Sendable {
        let url: URL
        let colorSpace: ImageColorSpace
    }

    private struct State {
        var entries = LRUList<String, Entry>()
        var bytes = 0
    }

    private let state = Mutex(State())
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// The entry for `key`, fresh or stale (one that cannot be revalidated is dropped once stale).
    func entry(forKey key: String) -> Lookup? {
        state.withLock { state in
            guard let entry = state.entries.touch(key) else { return nil }
            let now = ContinuousClock.now
            if let urlExpiry = entry.urlExpiry, urlExpiry <= now {
                if let old = state.entries.remove(key) { state.bytes -= old.cost }
                return nil
            }
            guard let expires = entry.expires, expires <= now else { return .fresh(entry) }
            guard entry.isRevalidatable else {
                if let old = state.entries.remove(key) { state.bytes -= old.cost }
                return nil
            }
            return .stale(entry)
        }
    }

    func store(_ entry: Entry, forKey key: String) {
        guard entry.cost <= limit / 4, entry.isKeepable else { return }
        state.withLock { state in
            if let old = state.entries.set(entry, for: key) { state.bytes -= old.cost }
            state.bytes += entry.cost
            while state.bytes > limit, let (_, oldest) = state.entries.popOldest() { state.bytes -= oldest.cost }
        }
    }
}

import Foundation
import NIOCore
import Synchronization
import WebImage

/// Encoded results in memory, least recently used first out, within a byte budget: a warm
/// request is answered from here with no decode and no encode.
final class ResponseCache: Sendable {
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

        /// Whether a response may be kept at all: not when its source may not be stored, or
        /// must be revalidated on every use.
        var isKeepable: Bool { !(freshness?.noStore ?? false) && !(freshness?.noCache ?? false) }
    }

    private struct State {
        var entries = LRUList<String, Entry>()
        var bytes = 0
    }

    private let state = Mutex(State())
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// The entry for `key`, unless its source's freshness has ended (it is dropped then).
    func entry(forKey key: String) -> Entry? {
        state.withLock { state in
            guard let entry = state.entries.touch(key) else { return nil }
            if let expires = entry.expires, expires <= .now {
                if let old = state.entries.remove(key) { state.bytes -= old.body.readableBytes }
                return nil
            }
            return entry
        }
    }

    func store(_ entry: Entry, forKey key: String) {
        guard entry.body.readableBytes <= limit / 4, entry.isKeepable else { return }
        state.withLock { state in
            if let old = state.entries.set(entry, for: key) { state.bytes -= old.body.readableBytes }
            state.bytes += entry.body.readableBytes
            while state.bytes > limit, let (_, oldest) = state.entries.popOldest() { state.bytes -= oldest.body.readableBytes }
        }
    }
}

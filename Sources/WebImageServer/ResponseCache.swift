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
    }

    private struct State {
        var entries = LRUList<String, Entry>()
        var bytes = 0
    }

    private let state = Mutex(State())
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    func entry(forKey key: String) -> Entry? { state.withLock { $0.entries.touch(key) } }

    func store(_ entry: Entry, forKey key: String) {
        guard entry.body.readableBytes <= limit / 4 else { return }
        state.withLock { state in
            if let old = state.entries.set(entry, for: key) { state.bytes -= old.body.readableBytes }
            state.bytes += entry.body.readableBytes
            while state.bytes > limit, let (_, oldest) = state.entries.popOldest() { state.bytes -= oldest.body.readableBytes }
        }
    }
}

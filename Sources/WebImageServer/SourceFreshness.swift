import Foundation
import Synchronization
import WebImage

/// The origin's caching rules of recent sources (see `ImageProcessor.sourceFreshness`).
final class SourceFreshness: Sendable {
    private let entries = Mutex(LRUList<String, HTTPFreshness>())
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// `freshness` when a result has it (and it is kept for `source`); otherwise what `source`'s
    /// last result had, if it is still known.
    func note(_ freshness: HTTPFreshness?, for source: URL) -> HTTPFreshness? {
        let key = source.absoluteString
        return entries.withLock { entries in
            guard let freshness else { return entries.touch(key) }
            _ = entries.set(freshness, for: key)
            while entries.count > limit, entries.popOldest() != nil {}
            return freshness
        }
    }
}

import Foundation
import Synchronization

/// What happens in a manager, for a program that watches every load and not only its own
/// (SDWebImage's download start and stop notifications, Coil's `EventListener`): see
/// `ImageManager.lifecycleEvents()`.
public enum LoadLifecycleEvent: Sendable {
    /// A load that missed the memory cache started its shared work (disk, then the loader).
    case loadStarted(URL)
    /// A transfer started (after the rate limiter, before the loader's queue).
    case downloadStarted(URL)
    /// A transfer ended with its body; the metrics when `HTTPImageLoader` made it.
    case downloadFinished(URL, bytes: Int, metrics: TransferMetrics?)
    /// A transfer failed (a retry may follow).
    case downloadFailed(URL, error: any Error)
    /// A call returned its image, from `source` (`.memory`, `.disk`, or `.none` for the loader).
    case loadFinished(URL, source: ImageCacheType)
    /// A call failed.
    case loadFailed(URL, error: any Error)
}

/// The subscribers of a manager's lifecycle events. With none, sending costs one atomic load.
final class LoadEventHub: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<LoadLifecycleEvent>.Continuation]>([:])
    private let count = Atomic<Int>(0)
    private let ids = Atomic<Int>(0)

    /// Whether anyone listens (check before building an event).
    var isWatched: Bool { count.load(ordering: .relaxed) > 0 }

    /// A new stream of every event from now on; it ends when the stream is dropped or the
    /// iterating task is cancelled.
    func subscribe(bufferingNewest limit: Int) -> AsyncStream<LoadLifecycleEvent> {
        let id = ids.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<LoadLifecycleEvent>.makeStream(bufferingPolicy: .bufferingNewest(limit))
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.subscribers.withLock { subscribers in
                if subscribers.removeValue(forKey: id) != nil { self.count.subtract(1, ordering: .relaxed) }
            }
        }
        subscribers.withLock { subscribers in
            subscribers[id] = continuation
            count.add(1, ordering: .relaxed)
        }
        return stream
    }

    /// Sends `event` to every subscriber; `event` is built only when someone listens.
    func send(_ event: @autoclosure () -> LoadLifecycleEvent) {
        guard isWatched else { return }
        let event = event()
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }
}

extension ImageManager {
    /// Every load of this manager as it happens: loads started past the memory cache,
    /// transfers started, finished and failed, and calls finished or failed (SDWebImage's
    /// download notifications, Coil's `EventListener`), for logging, dashboards or tests.
    /// Each call of this function gives a stream of its own, from now on; the newest `limit`
    /// events are kept while its reader is behind. Dropping the stream (or cancelling the task
    /// that iterates it) unsubscribes it. With no stream, the manager builds no event.
    public func lifecycleEvents(bufferingNewest limit: Int = 1024) -> AsyncStream<LoadLifecycleEvent> {
        pipeline.events.subscribe(bufferingNewest: limit)
    }
}

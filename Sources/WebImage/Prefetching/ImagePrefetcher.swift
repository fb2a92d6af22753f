import Foundation
import Synchronization

/// How far a prefetch batch got.
public struct PrefetchProgress: Sendable, Equatable {
    /// URLs loaded (from a cache or the loader).
    public var finished: Int
    /// URLs that failed (SDWebImage's skipped count).
    public var skipped: Int
    /// URLs in the batch.
    public var total: Int

    /// Finished plus skipped.
    public var completed: Int { finished + skipped }
    /// Whether every URL of the batch is done.
    public var isComplete: Bool { completed == total }

    /// A progress value.
    public init(finished: Int, skipped: Int, total: Int) {
        self.finished = finished
        self.skipped = skipped
        self.total = total
    }
}

/// Loads images into the caches ahead of use (SDWebImage's `SDWebImagePrefetcher`).
///
/// Each `prefetch(_:)` call is a batch: its stream reports progress after every URL and ends
/// when the batch is done. Cancelling the task that iterates the stream (or dropping the stream)
/// cancels that batch only; `cancelPrefetching()` cancels every batch.
public final class ImagePrefetcher: Sendable {
    /// The prefetcher over the shared manager.
    public static let shared = ImagePrefetcher()

    /// The manager that loads.
    public let manager: ImageManager
    /// Loads running at once per batch (default 3).
    public let maxConcurrentPrefetchCount: Int
    /// Options for every URL (default `.lowPriority`, as SDWebImage).
    public let options: ImageOptions
    /// Context for every URL.
    public let context: ImageContext

    private struct Batches {
        var running: [UUID: Task<Void, Never>] = [:]
        /// Batches that ended before they were registered.
        var ended: Set<UUID> = []
    }
    private let batches = Mutex(Batches())

    /// A prefetcher that loads through `manager`, `maxConcurrentPrefetchCount` at a time.
    public init(manager: ImageManager = .shared, maxConcurrentPrefetchCount: Int = 3, options: ImageOptions = .lowPriority,
                context: ImageContext = .init()) {
        self.manager = manager
        self.maxConcurrentPrefetchCount = max(1, maxConcurrentPrefetchCount)
        self.options = options
        self.context = context
    }

    /// Starts loading `urls`; the stream yields the progress after each URL and ends when all
    /// are done or the batch is cancelled.
    public func prefetch(_ urls: [URL]) -> AsyncStream<PrefetchProgress> {
        let (stream, continuation) = AsyncStream<PrefetchProgress>.makeStream()
        let id = UUID()
        let manager = self.manager, options = self.options, context = self.context, width = maxConcurrentPrefetchCount
        let task = Task {
            var progress = PrefetchProgress(finished: 0, skipped: 0, total: urls.count)
            await withTaskGroup(of: Bool.self) { group in
                var next = urls.makeIterator()
                func addNext() -> Bool {
                    guard let url = next.next() else { return false }
                    group.addTask {
                        do {
                            _ = try await manager.image(for: url, options: options, context: context)
                            return true
                        } catch {
                            return false
                        }
                    }
                    return true
                }
                for _ in 0..<width where !addNext() { break }
                while let loaded = await group.next() {
                    if Task.isCancelled { break }
                    if loaded { progress.finished += 1 } else { progress.skipped += 1 }
                    continuation.yield(progress)
                    _ = addNext()
                }
                group.cancelAll()
            }
            continuation.finish()
            self.batches.withLock { if $0.running.removeValue(forKey: id) == nil { $0.ended.insert(id) } }
        }
        batches.withLock { if $0.ended.remove(id) == nil { $0.running[id] = task } }
        continuation.onTermination = { _ in task.cancel() }
        if urls.isEmpty { continuation.finish() }
        return stream
    }

    /// Batches still running.
    public var runningBatchCount: Int { batches.withLock { $0.running.count } }

    /// Cancels every batch.
    public func cancelPrefetching() {
        let tasks = batches.withLock { Array($0.running.values) }
        for task in tasks { task.cancel() }
    }
}

import Foundation
import Synchronization

/// How far a prefetch batch got.
public struct PrefetchProgress: Sendable, Equatable {
    /// URLs loaded (from a cache or the loader) and, when they were not cached yet, stored.
    public var finished: Int
    /// URLs that failed, or that loaded but could not be stored (SDWebImage's skipped count).
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
/// when the batch is done (an empty batch reports 0 of 0 once). `maxConcurrentPrefetchCount`
/// bounds the prefetcher as a whole, as in SDWebImage: two batches of a prefetcher of 3 run 3
/// loads between them, not 6. Cancelling the task that iterates a stream (or dropping the
/// stream) cancels that batch only; `cancelPrefetching()` cancels every batch, and so does
/// dropping the prefetcher.
public final class ImagePrefetcher: Sendable {
    /// The prefetcher over the shared manager.
    public static let shared = ImagePrefetcher()

    /// The manager that loads.
    public let manager: ImageManager
    /// Loads running at once, across all batches of this prefetcher (default 3).
    public let maxConcurrentPrefetchCount: Int
    /// Options for every URL (default `.lowPriority`, as SDWebImage).
    public let options: ImageOptions
    /// Context for every URL.
    public let context: ImageContext

    /// The running batches; held apart from the prefetcher so that its tasks do not keep it alive.
    private let batches = BatchRegistry()
    /// The prefetcher-wide limit on loads at once.
    private let slots: TaskSlots

    /// A prefetcher that loads through `manager`, `maxConcurrentPrefetchCount` at a time.
    public init(manager: ImageManager = .shared, maxConcurrentPrefetchCount: Int = 3, options: ImageOptions = .lowPriority,
                context: ImageContext = .init()) {
        self.manager = manager
        self.maxConcurrentPrefetchCount = max(1, maxConcurrentPrefetchCount)
        self.options = options
        self.context = context
        slots = TaskSlots(max(1, maxConcurrentPrefetchCount))
    }

    deinit { batches.cancelAll() }

    /// Starts loading `urls`; the stream yields the progress after each URL and ends when all
    /// are done or the batch is cancelled. An empty batch yields one `0 of 0` value.
    public func prefetch(_ urls: [URL]) -> AsyncStream<PrefetchProgress> {
        let (stream, continuation) = AsyncStream<PrefetchProgress>.makeStream()
        guard !urls.isEmpty else {
            continuation.yield(PrefetchProgress(finished: 0, skipped: 0, total: 0))
            continuation.finish()
            return stream
        }
        let id = UUID()
        let manager = self.manager, options = self.options, context = self.context, slots = self.slots
        let width = maxConcurrentPrefetchCount, batches = self.batches
        let task = Task {
            var progress = PrefetchProgress(finished: 0, skipped: 0, total: urls.count)
            await withTaskGroup(of: Bool?.self) { group in
                var next = urls.makeIterator()
                func addNext() -> Bool {
                    guard let url = next.next() else { return false }
                    group.addTask {
                        // A slot of the prefetcher's (shared with its other batches), then the load.
                        guard await slots.acquire() else { return nil }
                        defer { slots.release() }
                        // Prefetched means cached: the load waits for its disk write, and one that
                        // failed (a full or read-only disk) counts as skipped.
                        do {
                            return try await manager.result(for: url, options: options.union(.waitStoreCache), context: context)
                                .storeFailure == nil
                        } catch {
                            return false
                        }
                    }
                    return true
                }
                for _ in 0..<width where !addNext() { break }
                while let loaded = await group.next() {
                    if Task.isCancelled { break }
                    guard let loaded else { continue }
                    if loaded { progress.finished += 1 } else { progress.skipped += 1 }
                    continuation.yield(progress)
                    _ = addNext()
                }
                group.cancelAll()
            }
            continuation.finish()
            batches.end(id)
        }
        batches.add(id, task)
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Batches still running.
    public var runningBatchCount: Int { batches.count }

    /// Cancels every batch.
    public func cancelPrefetching() { batches.cancelAll() }
}

/// The running batches of a prefetcher, by id.
final class BatchRegistry: Sendable {
    private struct State {
        var running: [UUID: Task<Void, Never>] = [:]
        /// Batches that ended before they were registered.
        var ended: Set<UUID> = []
    }
    private let state = Mutex(State())

    func add(_ id: UUID, _ task: Task<Void, Never>) { state.withLock { if $0.ended.remove(id) == nil { $0.running[id] = task } } }
    func end(_ id: UUID) { state.withLock { if $0.running.removeValue(forKey: id) == nil { $0.ended.insert(id) } } }
    var count: Int { state.withLock { $0.running.count } }

    func cancelAll() {
        let tasks = state.withLock { Array($0.running.values) }
        for task in tasks { task.cancel() }
    }
}


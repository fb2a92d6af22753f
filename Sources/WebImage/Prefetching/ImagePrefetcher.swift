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
    /// The URL whose load ended with this report (nil in an empty batch's one report), and
    /// whether it was prefetched (false: counted as skipped).
    public var url: URL?
    /// Whether `url` was prefetched.
    public var urlSucceeded = false

    /// Finished plus skipped.
    public var completed: Int { finished + skipped }
    /// Whether every URL of the batch is done.
    public var isComplete: Bool { completed == total }

    /// A progress value; `url` names the URL whose load ended with it.
    public init(finished: Int, skipped: Int, total: Int, url: URL? = nil, urlSucceeded: Bool = false) {
        self.finished = finished
        self.skipped = skipped
        self.total = total
        self.url = url
        self.urlSucceeded = urlSucceeded
    }
}

/// Loads images into the caches ahead of use (SDWebImage's `SDWebImagePrefetcher`, Nuke's
/// `ImagePrefetcher`).
///
/// Each `prefetch(_:)` call is a batch: its stream reports progress after every URL and ends
/// when the batch is done (an empty batch reports 0 of 0 once). `maxConcurrentPrefetchCount`
/// bounds the prefetcher as a whole, as in SDWebImage: two batches of a prefetcher of 3 run 3
/// loads between them, not 6. Cancelling the task that iterates a stream (or dropping the
/// stream) cancels that batch only; `cancelPrefetching()` cancels every batch, and so does
/// dropping the prefetcher. While `isPaused`, no new load starts (running ones finish); the
/// waiting ones start in order when it is set back.
public final class ImagePrefetcher: Sendable {
    /// Where prefetched images go (Nuke's `ImagePrefetcher.Destination`).
    public enum Destination: Sendable, Hashable {
        /// Decoded into the memory cache and stored on disk, as a load through the manager
        /// would (the default; SDWebImage's prefetcher).
        case memoryCache
        /// Downloaded and stored on disk as the server sent them, never decoded (through
        /// `ImageManager.data(for:)`): the bytes are ready for a later load, which decodes them.
        case diskCache
    }

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
    /// Where the images go (default `.memoryCache`).
    public let destination: Destination

    /// While true, no new load starts: the running ones finish, the others wait, and start in
    /// order once it is false again (Nuke's `isPaused`).
    public var isPaused: Bool {
        get { gate.isClosed }
        set { gate.isClosed = newValue }
    }
    private let gate = PauseGate()

    /// The running batches; held apart from the prefetcher so that its tasks do not keep it alive.
    private let batches = BatchRegistry()
    /// The prefetcher-wide limit on loads at once.
    private let slots: TaskSlots

    /// A prefetcher that loads through `manager`, `maxConcurrentPrefetchCount` at a time, into
    /// `destination`.
    public init(manager: ImageManager = .shared, maxConcurrentPrefetchCount: Int = 3, options: ImageOptions = .lowPriority,
                context: ImageContext = .init(), destination: Destination = .memoryCache) {
        self.manager = manager
        self.destination = destination
        self.maxConcurrentPrefetchCount = max(1, maxConcurrentPrefetchCount)
        self.options = options
        self.context = context
        slots = TaskSlots(max(1, maxConcurrentPrefetchCount))
    }

    deinit { batches.cancelAll() }

    /// Starts loading `urls` with the prefetcher's options and context, or this batch's own
    /// (`options` replace the prefetcher's; `context` is merged over its); the stream yields
    /// the progress after each URL and ends when all are done or the batch is cancelled. An
    /// empty batch yields one `0 of 0` value. A batch asked for from a task that is already
    /// cancelled loads nothing.
    public func prefetch(_ urls: [URL], options: ImageOptions? = nil, context: ImageContext? = nil) -> AsyncStream<PrefetchProgress> {
        let (stream, continuation) = AsyncStream<PrefetchProgress>.makeStream()
        guard !urls.isEmpty else {
            continuation.yield(PrefetchProgress(finished: 0, skipped: 0, total: 0))
            continuation.finish()
            return stream
        }
        let id = UUID()
        let manager = self.manager, options = options ?? self.options, slots = self.slots, gate = self.gate
        let context = context.map { $0.merged(over: self.context) } ?? self.context
        let width = maxConcurrentPrefetchCount, batches = self.batches, destination = self.destination
        // A batch asked for from a task already cancelled starts cancelled: it loads nothing, as
        // every stream the library hands out (see `AsyncThrowingStream.produced(by:)`).
        let cancelledAtCall = Task.isCancelled
        let task = Task {
            if cancelledAtCall { withUnsafeCurrentTask { $0?.cancel() } }
            var progress = PrefetchProgress(finished: 0, skipped: 0, total: urls.count)
            await withTaskGroup(of: (URL, Bool)?.self) { group in
                var next = urls.makeIterator()
                func addNext() -> Bool {
                    guard let url = next.next() else { return false }
                    group.addTask {
                        // A slot of the prefetcher's (shared with its other batches), then the load.
                        guard await slots.acquire() else { return nil }
                        defer { slots.release() }
                        // Paused: the slot is held, no load starts until the prefetcher resumes.
                        guard await gate.pass() else { return nil }
                        // Prefetched means cached: the load waits for its disk write, and one that
                        // failed (a full or read-only disk) counts as skipped.
                        do {
                            let options = options.union(.waitStoreCache)
                            switch destination {
                            case .memoryCache:
                                return (url, try await manager.result(for: url, options: options, context: context).storeFailure == nil)
                            case .diskCache:
                                return (url, try await manager.loadedData(for: url, options: options, context: context).storeFailure == nil)
                            }
                        } catch {
                            return (url, false)
                        }
                    }
                    return true
                }
                for _ in 0..<width where !addNext() { break }
                while let loaded = await group.next() {
                    if Task.isCancelled { break }
                    guard let (url, loaded) = loaded else { continue }
                    if loaded { progress.finished += 1 } else { progress.skipped += 1 }
                    progress.url = url
                    progress.urlSucceeded = loaded
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


import Foundation
import Synchronization

/// One image call held as a value (Nuke's `ImageTask`, Kingfisher's `DownloadTask`): made by
/// `ImageManager.imageTask(for:options:context:)`, it loads at once, and any number of callers
/// await its `image` or `result`, watch its `events`, `progress` and `previews`, change its
/// `priority` while it waits or runs, or `cancel()` it.
///
/// ```swift
/// let task = ImageManager.shared.imageTask(for: url)
/// task.priority = .high                 // moves the load in the loader's queue
/// for await progress in task.progress { print(progress.fraction ?? 0) }
/// let image = try await task.image
/// ```
///
/// A task is one caller of the manager's shared work, decided as `image(for:)` decides a call:
/// a memory hit (or a call that fails its checks) is answered while the task is made, so the
/// task has ended before it is returned; a miss subscribes to the work of its key (joined, or
/// started), so two tasks of one URL share one transfer and one decode, and cancelling one
/// leaves the other's load running. Copies of a task are the same task (equal, one `id`).
///
/// The load runs whether or not anyone holds the task: dropping every copy neither cancels it
/// nor ends a caller's wait. A caller that awaits `image` or `result` and is cancelled leaves
/// with `CancellationError`; when it was the last caller awaiting, the task is cancelled too (a
/// cancelled Swift task stops its load, as everywhere in the library).
public struct ImageTask: Sendable, Hashable, CustomStringConvertible {
    /// Where a task is.
    public enum State: Sendable, Equatable {
        /// Waiting for a load slot, or loading.
        case running
        /// Ended with an image.
        case completed
        /// Ended with an error other than a cancellation.
        case failed
        /// Cancelled (`cancel()`, the manager's `cancelAll()`, or its last awaiting caller's
        /// cancellation) before it had its image.
        case cancelled

        /// The state of a task that ended with `outcome`.
        init(_ outcome: Result<LoadOutcome, any Error>) {
            switch outcome {
            case .success: self = .completed
            case .failure(let error): self = error is CancellationError ? .cancelled : .failed
            }
        }
    }

    /// The URL the task loads.
    public let url: URL
    /// A number unique to this task in the process (Nuke's `taskId`).
    public let id: Int
    /// Ended when it was made, or subscribed to the shared work.
    @usableFromInline let kind: Kind
    /// The priority of a task that ended when it was made.
    @usableFromInline let endedPriority: ImageLoaderPriority

    @usableFromInline
    enum Kind: Sendable {
        /// A memory hit, answered while the task was made.
        case memory(Image)
        /// A call that failed its checks while the task was made.
        case failed(any Error)
        /// A subscriber of the shared work.
        case live(LiveImageTask)

        /// The outcome of a task that ended when it was made; nil for a live one.
        var ended: Result<LoadOutcome, any Error>? {
            switch self {
            case .memory(let image): .success(.memory(image))
            case .failed(let error): .failure(error)
            case .live: nil
            }
        }
    }

    private static let lastID = Atomic<Int>(0)

    /// A new task's id.
    @usableFromInline
    static func nextID() -> Int { lastID.add(1, ordering: .relaxed).newValue }

    @inlinable
    init(url: URL, _ kind: Kind, priority: ImageLoaderPriority = .normal) {
        self.url = url
        id = ImageTask.nextID()
        self.kind = kind
        endedPriority = priority
    }

    // MARK: - State

    /// Where the task is now.
    public var state: State {
        switch kind {
        case .memory: .completed
        case .failed(let error): State(.failure(error))
        case .live(let live): live.state
        }
    }

    /// Whether the task was cancelled before it had its image.
    public var isCancelled: Bool { state == .cancelled }

    /// The last progress reported (nil before the first, and for an image from memory).
    public var currentProgress: ImageProgress? {
        guard case .live(let live) = kind else { return nil }
        return live.currentProgress
    }

    /// How urgently the load runs. Setting it while the task waits for a load slot moves it in
    /// the queue; the shared load runs at the highest priority of its callers, so lowering one
    /// task's priority leaves a load that a more urgent caller shares where it is. Setting it on
    /// an ended task does nothing.
    public var priority: ImageLoaderPriority {
        get {
            guard case .live(let live) = kind else { return endedPriority }
            return live.priority
        }
        nonmutating set {
            if case .live(let live) = kind { live.priority = newValue }
        }
    }

    /// Cancels the task: its callers get `CancellationError`, and the shared load stops when no
    /// other caller wants it. Nothing once the task has ended.
    public func cancel() {
        if case .live(let live) = kind { live.cancel() }
    }

    // MARK: - Awaiting

    /// The image, awaited; any number of callers may await it. A task that ended when it was
    /// made answers on the caller's executor without suspending.
    /// - Throws: as `ImageManager.image(for:options:context:)`; `CancellationError` when the
    ///   task, or the awaiting caller, was cancelled.
    @inlinable
    nonisolated(nonsending) public var image: Image {
        get async throws {
            switch kind {
            case .memory(let image): image
            case .failed(let error): throw error
            case .live(let live): try await live.outcome().image
            }
        }
    }

    /// The image with its data, where it came from and the URL (Nuke's `response`).
    /// - Throws: as `image`.
    nonisolated(nonsending) public var result: ImageResult {
        get async throws {
            switch kind {
            case .memory(let image): ImageResult(image: image, data: nil, cacheType: .memory, url: url)
            case .failed(let error): throw error
            case .live(let live): try await live.outcome().result(url)
            }
        }
    }

    // MARK: - Streams

    /// The task's events from now on: progress, previews (with `.progressiveLoad`), the cached
    /// image first with `.refreshCached`, then `.finished` with the result; the stream throws the
    /// task's error. A stream made after the task ended gives `.finished` (or throws) at once.
    /// Dropping the stream stops only this stream, not the task.
    public var events: AsyncThrowingStream<ImageEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ImageEvent, any Error>.makeStream()
        watch(.events(continuation)) { continuation.onTermination = $0 }
        return stream
    }

    /// The task's progress from now on (Nuke's `progress`); ends when the task ends.
    public var progress: AsyncStream<ImageProgress> {
        let (stream, continuation) = AsyncStream<ImageProgress>.makeStream()
        watch(.progress(continuation)) { continuation.onTermination = $0 }
        return stream
    }

    /// The task's previews from now on (with `.progressiveLoad`; Nuke's `previews`); ends when
    /// the task ends.
    public var previews: AsyncStream<PartialImage> {
        let (stream, continuation) = AsyncStream<PartialImage>.makeStream()
        watch(.previews(continuation)) { continuation.onTermination = $0 }
        return stream
    }

    /// `watcher` watches the task, or ends at once when the task had ended when it was made.
    private func watch<Ended>(_ watcher: Watcher, onTermination: (@escaping @Sendable (Ended) -> Void) -> Void) {
        if case .live(let live) = kind { return live.watch(watcher, onTermination: onTermination) }
        if let ended = kind.ended { watcher.end(ended, url: url) }
    }

    // MARK: - Identity

    /// Tasks are equal when they are the same task.
    public static func == (lhs: ImageTask, rhs: ImageTask) -> Bool { lhs.id == rhs.id }

    /// Hashes the task's id.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// The task's id, URL and state.
    public var description: String { "ImageTask(id: \(id), url: \(url), state: \(state))" }
}

extension ImageTask {
    /// A stream that watches a task.
    enum Watcher: Sendable {
        case events(AsyncThrowingStream<ImageEvent, any Error>.Continuation)
        case progress(AsyncStream<ImageProgress>.Continuation)
        case previews(AsyncStream<PartialImage>.Continuation)

        /// Passes `event` on, as far as this stream wants it.
        func yield(_ event: ImageEvent) {
            switch (self, event) {
            case (.events(let continuation), _): continuation.yield(event)
            case (.progress(let continuation), .progress(let progress)): continuation.yield(progress)
            case (.previews(let continuation), .preview(let preview)): continuation.yield(preview)
            default: break
            }
        }

        /// Ends the stream with the task's `outcome` (an events stream gets `.finished` first).
        func end(_ outcome: Result<LoadOutcome, any Error>, url: URL) {
            switch self {
            case .events(let continuation):
                switch outcome {
                case .success(let loaded):
                    continuation.yield(.finished(loaded.result(url)))
                    continuation.finish()
                case .failure(let error):
                    continuation.finish(throwing: error)
                }
            case .progress(let continuation): continuation.finish()
            case .previews(let continuation): continuation.finish()
            }
        }
    }
}

import Foundation
import Synchronization

/// An `ImageTask` that subscribed to the shared work: its subscription, the task that awaits
/// the work's output for it, its callers and its streams. Made only when a call subscribes (a
/// memory hit makes none); it lives as long as its load, held by that waiting task, whether or
/// not a copy of the `ImageTask` is held.
@usableFromInline
final class LiveImageTask: Sendable {
    /// The URL the task loads (what its result names).
    let url: URL
    private let core: Mutex<Core>

    /// The task of `url`; its priority is its subscription's (`run`).
    init(url: URL) {
        self.url = url
        core = Mutex(Core(priority: .normal))
    }

    /// The event handler of the task of `url` kept in `live`, made on the first call.
    @usableFromInline
    static func handler(_ live: inout LiveImageTask?, _ url: URL) -> @Sendable (ImageEvent) -> Void {
        let task = live ?? LiveImageTask(url: url)
        live = task
        return task.eventHandler
    }

    // MARK: - State

    var state: ImageTask.State { core.withLock { $0.outcome.map(ImageTask.State.init) ?? .running } }

    var currentProgress: ImageProgress? { core.withLock { $0.progress } }

    /// The task's priority; a change reaches its subscription (see `ImageTask.priority`).
    var priority: ImageLoaderPriority {
        get { core.withLock { $0.priority } }
        set {
            let subscription = core.withLock { core -> Subscription? in
                guard core.outcome == nil else { return nil }
                core.priority = newValue
                core.prioritySet = true
                return core.subscription
            }
            // Read under the work's own lock: when changes race, the last one set is the one kept.
            if let subscription { subscription.work.setPriority(subscription.id, to: self.core.withLock { $0.priority }) }
        }
    }

    /// Cancels the task's wait: its subscription leaves the shared work.
    func cancel() {
        let waiter = core.withLock { core -> Task<Void, Never>? in
            guard core.outcome == nil, !core.cancelRequested else { return nil }
            core.cancelRequested = true
            return core.waiter
        }
        waiter?.cancel()
    }

    // MARK: - Awaiting

    /// The outcome, at once when the task has ended; otherwise awaited as one of its callers.
    @usableFromInline
    nonisolated(nonsending) func outcome() async throws -> LoadOutcome {
        if let outcome = core.withLock({ $0.outcome }) { return try outcome.get() }
        let id = core.withLock { $0.makeID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LoadOutcome, any Error>) in
                let ended = core.withLock { core -> Result<LoadOutcome, any Error>? in
                    if let outcome = core.outcome { return outcome }
                    if core.leftEarly.remove(id) != nil { return .failure(CancellationError()) }
                    core.awaiting[id] = continuation
                    return nil
                }
                if let ended { continuation.resume(with: ended) }
            }
        } onCancel: {
            leave(id)
        }
    }

    /// Caller `id` was cancelled while it awaited: it is resumed with `CancellationError`, and
    /// the task is cancelled when nobody else awaits it.
    private func leave(_ id: Int) {
        let (continuation, waiter) = core.withLock { core -> (CheckedContinuation<LoadOutcome, any Error>?, Task<Void, Never>?) in
            guard core.outcome == nil else { return (nil, nil) }
            guard let continuation = core.awaiting.removeValue(forKey: id) else {
                core.leftEarly.insert(id)   // cancelled before it parked: it finds itself gone
                return (nil, nil)
            }
            guard core.awaiting.isEmpty, !core.cancelRequested else { return (continuation, nil) }
            core.cancelRequested = true
            return (continuation, core.waiter)
        }
        continuation?.resume(throwing: CancellationError())
        waiter?.cancel()
    }

    // MARK: - Streams

    /// Adds `watcher`, or ends it at once when the task has ended; a watcher whose stream is
    /// dropped is taken out.
    func watch<Ended>(_ watcher: ImageTask.Watcher, onTermination: (@escaping @Sendable (Ended) -> Void) -> Void) {
        let (id, ended) = core.withLock { core -> (Int, Result<LoadOutcome, any Error>?) in
            if let outcome = core.outcome { return (0, outcome) }
            let id = core.makeID()
            core.watchers[id] = watcher
            return (id, nil)
        }
        if let ended { return watcher.end(ended, url: url) }
        // A strong reference: the cycle ends when the stream does (dropped, or ended with the task).
        onTermination { [self] _ in _ = core.withLock { $0.watchers.removeValue(forKey: id) } }
    }

    // MARK: - Fed by the manager

    /// The subscriber's event handler: the shared work's events, to the task's streams.
    var eventHandler: @Sendable (ImageEvent) -> Void { { [self] in received($0) } }

    /// Forwards an event of the shared work to the task's watchers.
    private func received(_ event: ImageEvent) {
        let watchers = core.withLock { core -> [ImageTask.Watcher] in
            if case .progress(let progress) = event { core.progress = progress }
            return core.watchers.isEmpty ? [] : Array(core.watchers.values)
        }
        for watcher in watchers { watcher.yield(event) }
    }

    /// The priority a task starts at before its load subscribes (a hooked call's task).
    func setInitialPriority(_ priority: ImageLoaderPriority) {
        core.withLock { $0.priority = priority }
    }

    /// The task is subscriber `id` of `work`, at `priority` unless the task's priority was set
    /// before (then the subscription is moved to that one).
    func attach(_ work: SharedWork<ImageEvent, SharedResult>, id: Int, priority: ImageLoaderPriority) {
        let wanted = core.withLock { core -> ImageLoaderPriority? in
            core.subscription = Subscription(work: work, id: id)
            guard core.prioritySet else {
                core.priority = priority
                return nil
            }
            return core.priority == priority ? nil : core.priority
        }
        if let wanted { work.setPriority(id, to: wanted) }
    }

    /// `wait` awaits the task's outcome in a task of its own (which holds this one until the
    /// load ends), and the task ends with it.
    func run(_ wait: @escaping @Sendable () async throws -> LoadOutcome) {
        let waiter = Task { [self] in
            let outcome: Result<LoadOutcome, any Error>
            do { outcome = .success(try await wait()) } catch { outcome = .failure(error) }
            end(outcome)
        }
        let cancelled = core.withLock { core -> Bool in
            core.waiter = waiter
            return core.cancelRequested
        }
        if cancelled { waiter.cancel() }
    }

    /// The task ends with `outcome`: its callers are resumed, its streams finished.
    private func end(_ outcome: Result<LoadOutcome, any Error>) {
        let (awaiting, watchers) = core.withLock { core in
            core.outcome = outcome
            core.subscription = nil
            core.waiter = nil
            defer { (core.awaiting, core.watchers) = ([:], [:]) }
            return (core.awaiting.values, core.watchers.values)
        }
        for continuation in awaiting { continuation.resume(with: outcome) }
        for watcher in watchers { watcher.end(outcome, url: url) }
    }
}

extension LiveImageTask {
    /// The task's subscription to the shared work while it runs.
    struct Subscription: Sendable {
        let work: SharedWork<ImageEvent, SharedResult>
        let id: Int
    }

    /// The task's state, under its lock.
    struct Core {
        var priority: ImageLoaderPriority
        /// Set once, when the task ends.
        var outcome: Result<LoadOutcome, any Error>?
        var subscription: Subscription?
        /// The task awaiting the shared work's output for this one.
        var waiter: Task<Void, Never>?
        var cancelRequested = false
        /// Whether `priority` was set by the task's holder (it then wins over the load's own).
        var prioritySet = false
        var progress: ImageProgress?
        var awaiting: [Int: CheckedContinuation<LoadOutcome, any Error>] = [:]
        /// Callers cancelled before they parked.
        var leftEarly: Set<Int> = []
        var watchers: [Int: ImageTask.Watcher] = [:]
        private var lastID = 0

        init(priority: ImageLoaderPriority) { self.priority = priority }

        mutating func makeID() -> Int {
            lastID += 1
            return lastID
        }
    }
}

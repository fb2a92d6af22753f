import Synchronization

/// One piece of work (a download, or a decode-transform-store) that several callers wait for.
///
/// Every subscriber gets every event sent after it joined (with `replaysEvents`, also those sent
/// before) and the one output. A subscriber whose task is cancelled leaves at once with a
/// `CancellationError`; when the last subscriber leaves before the end, the work's task is
/// cancelled. The table that hands out the work is told when it ends or is abandoned, so that a
/// later caller starts afresh.
final class SharedWork<Event: Sendable, Output: Sendable>: Sendable {
    typealias EventHandler = @Sendable (Event) -> Void

    private struct Subscriber {
        let onEvent: EventHandler?
        /// Resumed exactly once: by `finish`, `leave` or `cancelEverything`, each of which takes it out under the lock.
        var continuation: UnsafeContinuation<Output, any Error>?
    }

    private struct State {
        /// By id, in the order they joined (a subscriber that left is nil): the output goes to
        /// them in that order, which is the order a task group removes its children fastest
        /// (resuming 1,000 callers out of order cost 1-2 ms more in its child list).
        var subscribers: [Subscriber?] = []
        var live = 0
        var outcome: Result<Output, any Error>?
        var abandoned = false
        var task: Task<Void, Never>?
        var history: [Event] = []

        /// Takes subscriber `id` out; nil when it had already left.
        @discardableResult
        mutating func remove(_ id: Int) -> Subscriber? {
            guard id < subscribers.count, let subscriber = subscribers[id] else { return nil }
            subscribers[id] = nil
            live -= 1
            return subscriber
        }
    }

    private let state = Mutex(State())
    private let replaysEvents: Bool
    /// Called once when the work ends or is abandoned (the table forgets it).
    private let onEnd: @Sendable () -> Void

    init(replaysEvents: Bool = false, onEnd: @escaping @Sendable () -> Void) {
        self.replaysEvents = replaysEvents
        self.onEnd = onEnd
    }

    /// Starts `body`; its result or error goes to every subscriber.
    func start(priority: TaskPriority?, _ body: @escaping @Sendable (SharedWork) async throws -> Output) {
        let task = Task(priority: priority) {
            let outcome: Result<Output, any Error>
            do { outcome = .success(try await body(self)) } catch { outcome = .failure(error) }
            self.finish(outcome)
        }
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.abandoned
        }
        if cancelNow { task.cancel() }
    }

    /// Registers a subscriber before it waits; nil when the work was abandoned (start another).
    func reserve(onEvent: EventHandler?) -> Int? {
        state.withLock { state -> Int? in
            guard !state.abandoned else { return nil }
            let id = state.subscribers.count
            if let onEvent { for event in state.history { onEvent(event) } }
            state.subscribers.append(Subscriber(onEvent: onEvent, continuation: nil))
            state.live += 1
            return id
        }
    }

    /// Whether any subscriber watches events (the work may then choose a streaming path).
    var hasEventSubscribers: Bool {
        state.withLock { $0.subscribers.contains { $0?.onEvent != nil } }
    }

    /// Waits for the output as subscriber `id`; throws `CancellationError` when the caller's task
    /// is cancelled, without waiting for the work.
    func wait(_ id: Int) async throws -> Output {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Output, any Error>) in
                let immediate = state.withLock { state -> Result<Output, any Error>? in
                    if let outcome = state.outcome {
                        state.remove(id)
                        return outcome
                    }
                    guard id < state.subscribers.count, state.subscribers[id] != nil, !Task.isCancelled else {
                        return .failure(CancellationError())
                    }
                    state.subscribers[id]?.continuation = continuation
                    return nil
                }
                if let immediate {
                    if case .failure(let error) = immediate, error is CancellationError { leave(id) }
                    continuation.resume(with: immediate)
                }
            }
        } onCancel: {
            leave(id, resuming: true)
        }
    }

    /// Sends `event` to every subscriber that watches events.
    func send(_ event: Event) {
        state.withLock { state in
            if replaysEvents { state.history.append(event) }
            for case let subscriber? in state.subscribers { subscriber.onEvent?(event) }
        }
    }

    /// Removes subscriber `id` (resuming it with `CancellationError` when asked); abandons the
    /// work when nobody is left and it has not ended.
    private func leave(_ id: Int, resuming: Bool = false) {
        let (continuation, abandon, task) = state.withLock { state -> (UnsafeContinuation<Output, any Error>?, Bool, Task<Void, Never>?) in
            let removed = state.remove(id)
            let abandon = state.live == 0 && state.outcome == nil && !state.abandoned
            if abandon { state.abandoned = true }
            return (resuming ? removed?.continuation : nil, abandon, state.task)
        }
        continuation?.resume(throwing: CancellationError())
        if abandon {
            task?.cancel()
            onEnd()
        }
    }

    /// Whether the work has ended or was abandoned.
    var isOver: Bool { state.withLock { $0.outcome != nil || $0.abandoned } }

    /// Abandons the work whoever waits: every subscriber gets `CancellationError`.
    func cancelEverything() {
        let (waiting, task) = state.withLock { state -> ([UnsafeContinuation<Output, any Error>], Task<Void, Never>?) in
            guard state.outcome == nil, !state.abandoned else { return ([], nil) }
            state.abandoned = true
            let waiting = state.subscribers.compactMap { $0?.continuation }
            state.subscribers = []
            state.live = 0
            return (waiting, state.task)
        }
        task?.cancel()
        for continuation in waiting { continuation.resume(throwing: CancellationError()) }
    }

    /// Gives `output` to every subscriber now, while the work still has steps to finish (a
    /// store): the work stays joinable, and a caller that joins before it ends gets `output`
    /// at once.
    func deliver(_ output: Output) {
        for continuation in takeWaiting(.success(output)) { continuation.resume(returning: output) }
    }

    private func finish(_ outcome: Result<Output, any Error>) {
        let waiting = takeWaiting(outcome)
        let wasAbandoned = state.withLock { $0.abandoned }
        if !wasAbandoned { onEnd() }
        for continuation in waiting { continuation.resume(with: outcome) }
    }

    /// Records the outcome (the first one counts) and takes the waiting subscribers out, in the
    /// order they joined.
    private func takeWaiting(_ outcome: Result<Output, any Error>) -> [UnsafeContinuation<Output, any Error>] {
        state.withLock { state -> [UnsafeContinuation<Output, any Error>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            state.history = []
            var waiting: [UnsafeContinuation<Output, any Error>] = []
            waiting.reserveCapacity(state.live)
            for id in state.subscribers.indices {
                if let continuation = state.subscribers[id]?.continuation {
                    waiting.append(continuation)
                    state.remove(id)
                }
            }
            return waiting
        }
    }
}

/// The in-flight table: at most one `SharedWork` per key; a caller of a key joins the work
/// already running for it, or starts it.
///
/// A lock rather than an actor: joining is a few dictionary operations, and with a thousand
/// callers of one URL an actor hop per caller (each one contended) cost more than the rest of
/// the caller's path together (see Benchmarks/README.md).
final class InFlightTable<Key: Hashable & Sendable, Event: Sendable, Output: Sendable>: Sendable {
    typealias Work = SharedWork<Event, Output>
    private let works = Mutex<[Key: Work]>([:])

    /// Number of works running (for tests and statistics).
    var count: Int { works.withLock { $0.count } }

    /// Joins the work for `key`, or starts `body` as a new one; returns the work and the
    /// caller's subscription id.
    func join(_ key: Key, replaysEvents: Bool = false, priority: TaskPriority? = nil, onEvent: Work.EventHandler?,
              body: @escaping @Sendable (Work) async throws -> Output) -> (Work, Int) {
        let (work, id, isNew) = works.withLock { works -> (Work, Int, Bool) in
            if let work = works[key], let id = work.reserve(onEvent: onEvent) { return (work, id, false) }
            let work = Work(replaysEvents: replaysEvents) { [weak self] in self?.forget(key) }
            works[key] = work
            return (work, work.reserve(onEvent: onEvent)!, true)
        }
        if isNew { work.start(priority: priority, body) }
        return (work, id)
    }

    /// Joins the work for `key` when one is running; nil otherwise.
    func joinIfRunning(_ key: Key, onEvent: Work.EventHandler?) -> (Work, Int)? {
        works.withLock { works -> (Work, Int)? in
            guard let work = works[key], let id = work.reserve(onEvent: onEvent) else { return nil }
            return (work, id)
        }
    }

    /// Joins (or starts) and waits for the output.
    func run(_ key: Key, replaysEvents: Bool = false, onEvent: Work.EventHandler?,
             body: @escaping @Sendable (Work) async throws -> Output) async throws -> Output {
        let (work, id) = join(key, replaysEvents: replaysEvents, priority: Task.currentPriority, onEvent: onEvent, body: body)
        return try await work.wait(id)
    }

    /// Cancels every work: their subscribers get `CancellationError`.
    func cancelAll() {
        let all = works.withLock { works in
            defer { works = [:] }
            return Array(works.values)
        }
        for work in all { work.cancelEverything() }
    }

    private func forget(_ key: Key) {
        // Only the work that ended is forgotten: a newer one may have taken its key.
        works.withLock { works in
            if let work = works[key], work.isOver { works[key] = nil }
        }
    }
}

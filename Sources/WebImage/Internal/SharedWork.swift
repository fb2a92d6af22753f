import Synchronization

/// One piece of work (a download, or a decode-transform-store) that several callers wait for.
///
/// Every subscriber gets every event sent after it joined (with `replaysEvents`, also those sent
/// before) and the one output. A subscriber whose task is cancelled leaves at once with a
/// `CancellationError`; when the last subscriber leaves before the end, the work's task is
/// cancelled. The table that hands out the work is told when it ends or is abandoned, so that a
/// later caller starts afresh.
///
/// The rules live in `SharedWorkStateMachine`; this class holds it under a lock and carries out
/// what each transition returns after the lock is released: no continuation is resumed, no
/// task cancelled and no caller's event handler called while the lock is held.
///
/// Lock order: `InFlightTable`'s lock, then this work's lock (a join reserves under both); never
/// the other way round. The continuations are unsafe ones (the checked kind costs a lock and an
/// allocation per caller, measured with 1,000 callers): the state machine hands each one out
/// exactly once, to the one transition that takes it out of the state.
final class SharedWork<Event: Sendable, Output: Sendable>: Sendable {
    typealias EventHandler = @Sendable (Event) -> Void
    typealias Waiter = UnsafeContinuation<Output, any Error>
    typealias Machine = SharedWorkStateMachine<Event, Output, EventHandler, Waiter, Task<Void, Never>>

    /// A caller's place in the work: its id, and the events to replay to it before it waits.
    struct Subscription: Sendable {
        let id: Int
        fileprivate let replay: [Event]
        fileprivate let onEvent: EventHandler?
    }

    private let machine: Mutex<Machine>
    /// Called once when the work ends or is abandoned (the table forgets it).
    private let onEnd: @Sendable () -> Void

    init(replaysEvents: Bool = false, onEnd: @escaping @Sendable () -> Void) {
        machine = Mutex(Machine(replaysEvents: replaysEvents))
        self.onEnd = onEnd
    }

    /// Starts `body`; its result or error goes to every subscriber.
    func start(priority: TaskPriority?, _ body: @escaping @Sendable (SharedWork) async throws -> Output) {
        let task = Task(priority: priority) {
            let outcome: Result<Output, any Error>
            do { outcome = .success(try await body(self)) } catch { outcome = .failure(error) }
            self.finish(outcome)
        }
        if machine.withLock({ $0.started(task) }) { task.cancel() }
    }

    /// Registers a subscriber before it waits; nil when the work was abandoned (start another).
    /// Call `replay(_:)` with the result once every lock is released.
    func reserve(onEvent: EventHandler?) -> Subscription? {
        switch machine.withLock({ $0.reserve(onEvent: onEvent) }) {
        case .subscribed(let id, let replay): Subscription(id: id, replay: replay, onEvent: onEvent)
        case .ended(let id): Subscription(id: id, replay: [], onEvent: nil)
        case .abandoned: nil
        }
    }

    /// Gives a new subscriber the events sent before it joined (and any sent meanwhile), in
    /// order, before it receives events directly.
    func replay(_ subscription: Subscription) {
        guard let onEvent = subscription.onEvent else { return }
        var events = subscription.replay
        while !events.isEmpty {
            for event in events { onEvent(event) }
            events = machine.withLock { $0.replayed(subscription.id) }
        }
    }

    /// Whether any subscriber watches events (the work may then choose a streaming path).
    var hasEventSubscribers: Bool { machine.withLock { $0.hasEventSubscribers } }

    /// Waits for the output as subscriber `id`; throws `CancellationError` when the caller's task
    /// is cancelled, without waiting for the work.
    func wait(_ id: Int) async throws -> Output {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (waiter: Waiter) in
                switch machine.withLock({ $0.wait(id, waiter: waiter, isCancelled: Task.isCancelled) }) {
                case .suspended:
                    break
                case .resume(let outcome):
                    waiter.resume(with: outcome)
                case .cancelled(let abandon, let worker):
                    waiter.resume(throwing: CancellationError())
                    if abandon { abandoned(worker) }
                }
            }
        } onCancel: {
            leave(id)
        }
    }

    /// Sends `event` to every subscriber that watches events (called by the work's own task).
    func send(_ event: Event) {
        for handler in machine.withLock({ $0.send(event) }) { handler(event) }
    }

    /// Subscriber `id` leaves; the work is abandoned when nobody is left and it has not ended.
    private func leave(_ id: Int) {
        switch machine.withLock({ $0.leave(id) }) {
        case .none:
            break
        case .resume(let waiter):
            waiter.resume(throwing: CancellationError())
        case .abandon(let waiter, let worker):
            waiter?.resume(throwing: CancellationError())
            abandoned(worker)
        }
    }

    private func abandoned(_ worker: Task<Void, Never>?) {
        worker?.cancel()
        onEnd()
    }

    /// Whether the work has ended or was abandoned.
    var isOver: Bool { machine.withLock { $0.isOver } }

    /// Abandons the work whoever waits: every subscriber gets `CancellationError`.
    func cancelEverything() {
        let (waiters, worker) = machine.withLock { $0.cancelEverything() }
        worker?.cancel()
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
    }

    /// Gives `output` to every subscriber now, while the work still has steps to finish (a
    /// store): the work stays joinable, and a caller that joins before it ends gets `output`
    /// at once.
    func deliver(_ output: Output) {
        for waiter in machine.withLock({ $0.deliver(output) }) { waiter.resume(returning: output) }
    }

    private func finish(_ outcome: Result<Output, any Error>) {
        let action = machine.withLock { $0.finish(outcome) }
        if action.ends { onEnd() }
        for waiter in action.waiters { waiter.resume(with: action.outcome) }
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
        let (work, subscription, isNew) = works.withLock { works -> (Work, Work.Subscription, Bool) in
            if let work = works[key], let subscription = work.reserve(onEvent: onEvent) { return (work, subscription, false) }
            let work = Work(replaysEvents: replaysEvents) { [weak self] in self?.forget(key) }
            works[key] = work
            // A new work is waiting and not yet started: reserving cannot fail.
            return (work, work.reserve(onEvent: onEvent)!, true)
        }
        work.replay(subscription)
        if isNew { work.start(priority: priority, body) }
        return (work, subscription.id)
    }

    /// Joins the work for `key` when one is running; nil otherwise.
    func joinIfRunning(_ key: Key, onEvent: Work.EventHandler?) -> (Work, Int)? {
        let joined = works.withLock { works -> (Work, Work.Subscription)? in
            guard let work = works[key], let subscription = work.reserve(onEvent: onEvent) else { return nil }
            return (work, subscription)
        }
        guard let (work, subscription) = joined else { return nil }
        work.replay(subscription)
        return (work, subscription.id)
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

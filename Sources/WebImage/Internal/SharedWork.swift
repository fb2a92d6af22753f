import Synchronization

/// One piece of work (a download, or a decode-transform-store) that several callers wait for.
///
/// Every subscriber gets every event sent after it joined (with `replays`, also those it accepts
/// sent before) and the one output. A subscriber whose task is cancelled leaves at once with a
/// `CancellationError`; when the last subscriber leaves before the end, the work's task is
/// cancelled. The table that hands out the work is told when it ends or is abandoned, so that a
/// later caller starts afresh.
///
/// The rules live in `SharedWorkStateMachine`; this class holds it under a lock and carries out
/// what each transition returns after the lock is released: no continuation is resumed, no
/// task cancelled and no caller's event handler called while the lock is held.
///
/// Priority: each subscriber says how urgently it wants the work; the work's `priority` is the
/// highest of them, raised when a more urgent caller joins and lowered when it leaves. The
/// work's body passes that handle on to its requests (a loader reorders its queue).
///
/// Lock order: `InFlightTable`'s lock, then this work's lock (a join reserves under both), then
/// the `priority` handle's lock (stored under the work's lock so that concurrent changes land in
/// order; its observers are called after every lock is released); never the other way round.
///
/// The continuations are unsafe ones (the checked kind costs a lock and an allocation per
/// caller): the state machine hands each one out exactly once, to
/// the one transition that takes it out of the state.
@usableFromInline
final class SharedWork<Event: Sendable, Output: Sendable>: Sendable {
    typealias EventHandler = @Sendable (Event) -> Void
    typealias Waiter = UnsafeContinuation<Output, any Error>
    typealias Machine = SharedWorkStateMachine<Event, Output, EventHandler, Waiter, Task<Void, Never>>

    /// A caller's place in the work: its id, and the events to replay to it before it waits.
    struct Subscription: Sendable {
        let id: Int
        fileprivate let replay: [Event]
        fileprivate let onEvent: EventHandler?
        fileprivate let priorityChanged: Bool
    }

    private let machine: Mutex<Machine>
    /// Called once when the work ends or is abandoned (the table forgets it).
    private let onEnd: @Sendable () -> Void
    /// The highest priority of the subscribers, for the work's own requests.
    let priority = LoadPriority()

    /// The gate the work's task waits at before it exists, and the work's entry in it.
    private let admission: (gate: LoadAdmission, id: Int)?

    init(replays: (@Sendable (Event) -> Bool)? = nil, admission: LoadAdmission? = nil, onEnd: @escaping @Sendable () -> Void) {
        machine = Mutex(Machine(replays: replays))
        self.admission = admission.map { ($0, $0.makeID()) }
        self.onEnd = onEnd
    }

    /// Starts `body`, at once or (with an admission gate) when the gate admits the work, by the
    /// work's priority, `lifo` deciding within a level; its result or error goes to every
    /// subscriber. With `first`, that stage runs at once, before admission (a cache asked
    /// first): an output it gives is the work's, and only without one is `body` admitted.
    func start(priority: TaskPriority?, lifo: Bool = false, first: (@Sendable () async -> Output?)? = nil,
               _ body: @escaping @Sendable (SharedWork) async throws -> Output) {
        guard let first else { return admit(priority: priority, lifo: lifo, body) }
        let task = Task(priority: priority) {
            if let output = await first() { return self.finish(.success(output)) }
            if self.machine.withLock({ $0.firstStageMissed() }) { self.admit(priority: priority, lifo: lifo, body) }
        }
        if machine.withLock({ $0.started(task) }) { task.cancel() }
    }

    /// Runs `body` at once, or when the admission gate admits the work.
    private func admit(priority: TaskPriority?, lifo: Bool, _ body: @escaping @Sendable (SharedWork) async throws -> Output) {
        guard let (gate, id) = admission else { return run(priority: priority, body) }
        // Watched before it is queued: a change in between is read by the enqueue. No weak
        // reference to the work (the gate is held by the work anyway, the handle is passed in):
        // one would give the work a side table, and every retain and release of it by each of
        // its callers would take the runtime's slow path. Moving an entry that already left the
        // queue does nothing.
        self.priority.observe { [gate] handle in gate.move(id) { handle.value.rawValue } }
        gate.enqueue(id, level: { self.priority.value.rawValue }, lifo: lifo) { [self] in
            run(priority: priority, body)
        }
    }

    private func run(priority: TaskPriority?, _ body: @escaping @Sendable (SharedWork) async throws -> Output) {
        let gate = admission?.gate
        let task = Task(priority: priority) {
            let outcome: Result<Output, any Error>
            do { outcome = .success(try await body(self)) } catch { outcome = .failure(error) }
            self.finish(outcome)
            gate?.finished()
        }
        if machine.withLock({ $0.started(task) }) { task.cancel() }
    }

    /// Registers a subscriber at `priority` before it waits; nil when the work was abandoned
    /// (start another). Call `replay(_:)` with the result once every lock is released.
    func reserve(onEvent: EventHandler?, priority: ImageLoaderPriority = .normal) -> Subscription? {
        let action = machine.withLock { machine -> Machine.ReserveAction in
            let action = machine.reserve(onEvent: onEvent, priority: priority)
            if case .subscribed(_, _, true) = action { self.priority.store(machine.priority) }
            return action
        }
        switch action {
        case .subscribed(let id, let replay, let changed):
            return Subscription(id: id, replay: replay, onEvent: onEvent, priorityChanged: changed)
        case .ended(let id): return Subscription(id: id, replay: [], onEvent: nil, priorityChanged: false)
        case .abandoned: return nil
        }
    }

    /// Subscriber `id` now wants `priority` (the work's priority follows the highest). It is
    /// read under the work's lock, so that racing changes end at the last value.
    func setPriority(_ id: Int, to priority: @autoclosure () -> ImageLoaderPriority) {
        let changed = machine.withLock { machine in
            let changed = machine.setPriority(id, to: priority())
            if changed { self.priority.store(machine.priority) }
            return changed
        }
        if changed { self.priority.notify() }
    }

    /// Gives a new subscriber the events sent before it joined (and any sent meanwhile), in
    /// order, before it receives events directly; tells the work's requests when the new
    /// subscriber raised its priority.
    func replay(_ subscription: Subscription) {
        if subscription.priorityChanged { priority.notify() }
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
    /// is cancelled, without waiting for the work. A task cancelled before it waits has left
    /// already (the cancellation handler runs first), and its wait finds it gone. It runs on its
    /// callers' executor: a joining caller's wait makes no executor hop.
    nonisolated(nonsending) func wait(_ id: Int) async throws -> Output {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (waiter: Waiter) in park(id, waiter) }
        } onCancel: {
            leave(id)
        }
    }

    /// Subscriber `id` waits with `waiter`, resumed at once when the outcome is in: the step
    /// under the state machine's lock.
    private func park(_ id: Int, _ waiter: Waiter) {
        if case .resume(let outcome) = machine.withLock({ $0.wait(id, waiter: waiter) }) {
            waiter.resume(with: outcome)
        }
    }

    /// Sends `event` to every subscriber that watches events (called by the work's own task).
    func send(_ event: Event) {
        for handler in machine.withLock({ $0.send(event) }) { handler(event) }
    }

    /// Subscriber `id` leaves with `error` (its deadline passed): a waiting caller is resumed
    /// with it, one that has not yet waited finds itself gone; the work goes on for the others
    /// and is abandoned when nobody is left. Nothing when the subscriber is gone already.
    func expire(_ id: Int, with error: any Error) { leave(id, error) }

    /// Subscriber `id` leaves; the work is abandoned when nobody is left and it has not ended.
    private func leave(_ id: Int, _ error: any Error = CancellationError()) {
        let action = machine.withLock { machine -> Machine.LeaveAction in
            let action = machine.leave(id)
            switch action {
            case .none(true), .resume(_, true): self.priority.store(machine.priority)
            default: break
            }
            return action
        }
        switch action {
        case .none(let changed):
            if changed { priority.notify() }
        case .resume(let waiter, let changed):
            waiter.resume(throwing: error)
            if changed { priority.notify() }
        case .abandon(let waiter, let worker):
            waiter?.resume(throwing: error)
            abandoned(worker)
        }
    }

    private func abandoned(_ worker: Task<Void, Never>?) {
        if let worker {
            worker.cancel()
        } else if let (gate, id) = admission {
            gate.withdraw(id)   // never started: it leaves the admission queue
        }
        onEnd()
    }

    /// Whether the work has ended or was abandoned.
    var isOver: Bool { machine.withLock { $0.isOver } }

    /// Abandons the work whoever waits: every subscriber gets `CancellationError`.
    func cancelEverything() {
        let (waiters, worker) = machine.withLock { $0.cancelEverything() }
        if let worker {
            worker.cancel()
        } else if let (gate, id) = admission {
            gate.withdraw(id)
        }
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
    }

    /// Gives `output` to every subscriber waiting now, while the work still has steps to finish
    /// (a store): the work stays joinable, and a caller that joins before it ends gets `late`
    /// at once; a subscriber that had joined but not yet started waiting gets `early` (both by
    /// default `output`). Returns how many subscribers it resumed.
    @discardableResult
    func deliver(_ output: Output, late: Output? = nil, early: Output? = nil) -> Int {
        let waiters = machine.withLock { $0.deliver(output, late: late, early: early) }
        for waiter in waiters { waiter.resume(returning: output) }
        return waiters.count
    }

    private func finish(_ outcome: Result<Output, any Error>) {
        let action = machine.withLock { $0.finish(outcome) }
        if action.ends { onEnd() }
        for waiter in action.waiters { waiter.resume(with: action.outcome) }
    }
}

/// The in-flight table: at most one `SharedWork` per key; a caller of a key joins the work
/// already running for it, or starts it. A work may also be found by an alias: a second key
/// under which callers that are known to make the same work find it without building the
/// first (the manager's calls with no options and no context of their own alias their work by
/// its URL).
///
/// A lock rather than an actor: joining is a few dictionary operations, and with a thousand
/// callers of one URL an actor hop per caller (each one contended) cost more than the rest of
/// the caller's path together (see Benchmarks/README.md).
final class InFlightTable<Key: Hashable & Sendable, Event: Sendable, Output: Sendable>: Sendable {
    typealias Work = SharedWork<Event, Output>
    /// A work, and the key it was made under (an alias maps to the same entry).
    private struct Entry {
        let work: Work
        let key: Key
    }
    /// The works by key and alias, and the last key found.
    private struct Table {
        var byKey: [Key: Entry] = [:]
        /// The key of the last look-up that found a work, and what it found, until the table
        /// changes: a thousand callers of one URL each compare one key instead of hashing it.
        var lastKey: Key?
        var lastEntry: Entry?

        mutating func find(_ key: Key) -> Entry? {
            if lastKey == key { return lastEntry }
            guard let entry = byKey[key] else { return nil }
            (lastKey, lastEntry) = (key, entry)
            return entry
        }

        /// Forgets the last key found (the table changed).
        mutating func changed() { (lastKey, lastEntry) = (nil, nil) }
    }
    private let works = Mutex<Table>(Table())
    /// The number of works (aliases not counted), kept apart so that `isEmpty` takes no lock.
    private let size = Atomic<Int>(0)

    /// Where new works wait for their turn to start; nil: they start at once.
    private let admission: LoadAdmission?

    /// A table whose works start at once, or when `admission` admits them.
    init(admission: LoadAdmission? = nil) { self.admission = admission }

    /// Number of works running (for tests and statistics).
    var count: Int { size.load(ordering: .relaxed) }

    /// Whether no work is running, without taking the lock (a hint: a work may start right
    /// after; a caller that acts on it must still be correct then).
    var isEmpty: Bool { size.load(ordering: .relaxed) == 0 }

    /// Joins the work for `key`, or starts `body` as a new one; returns the work, the
    /// caller's subscription id, and whether this call made the work.
    /// `priority` is how urgently this caller wants it (the work follows its most urgent caller);
    /// `taskPriority` is the new work's task's.
    /// With an admission gate, a new work starts when admitted, newest first within its level
    /// when `lifo`; its `first` stage, when given, runs before that (see `SharedWork.start`).
    /// A new work is also found by `alias`, when given, until it ends.
    func join(_ key: Key, alias: Key? = nil, replays: (@Sendable (Event) -> Bool)? = nil, priority: ImageLoaderPriority = .normal,
              taskPriority: TaskPriority? = nil, lifo: Bool = false, first: (@Sendable () async -> Output?)? = nil,
              onEvent: Work.EventHandler?, body: @escaping @Sendable (Work) async throws -> Output) -> (work: Work, id: Int, isNew: Bool) {
        let (work, subscription, isNew) = works.withLock { works -> (Work, Work.Subscription, Bool) in
            if let entry = works.find(key), let subscription = entry.work.reserve(onEvent: onEvent, priority: priority) {
                return (entry.work, subscription, false)
            }
            let work = Work(replays: replays, admission: admission) { [weak self] in self?.forget(key, alias: alias) }
            let entry = Entry(work: work, key: key)
            works.changed()
            // A work that ended and is not yet forgotten is replaced, not counted again.
            if works.byKey.updateValue(entry, forKey: key) == nil { size.add(1, ordering: .relaxed) }
            if let alias { works.byKey[alias] = entry }
            // A new work is waiting and not yet started: reserving cannot fail.
            return (work, work.reserve(onEvent: onEvent, priority: priority)!, true)
        }
        work.replay(subscription)
        if isNew { work.start(priority: taskPriority, lifo: lifo, first: first, body) }
        return (work, subscription.id, isNew)
    }

    /// Joins the work found by `key` (its own key or an alias) when one is running; returns the
    /// work, the caller's subscription id and the key the work was made under; nil otherwise.
    /// `priority` gives the caller's priority from that key.
    ///
    /// The work is reserved after the table's lock is released: a work that ended or was
    /// abandoned meanwhile answers the reservation as it would under the lock (its outcome, or
    /// nil: start another). Only the entry is copied out of the lock, not a subscription with
    /// it, which each joining caller would copy and destroy.
    func joinIfRunning(_ key: Key, priority: (Key) -> ImageLoaderPriority, onEvent: Work.EventHandler?) -> (work: Work, id: Int, key: Key)? {
        guard let entry = works.withLock({ $0.find(key) }),
              let subscription = entry.work.reserve(onEvent: onEvent, priority: priority(entry.key)) else { return nil }
        entry.work.replay(subscription)
        return (entry.work, subscription.id, entry.key)
    }

    /// Whether a work is found by `key` (for tests).
    func contains(_ key: Key) -> Bool { works.withLock { $0.byKey[key] != nil } }

    /// Joins (or starts) and waits for the output. With `priority`, the caller's subscription
    /// follows that handle (the work rises and falls with it).
    func run(_ key: Key, replays: (@Sendable (Event) -> Bool)? = nil, priority: LoadPriority? = nil, onEvent: Work.EventHandler?,
             body: @escaping @Sendable (Work) async throws -> Output) async throws -> Output {
        let (work, id, _) = join(key, replays: replays, priority: priority?.value ?? .normal,
                              taskPriority: Task.currentPriority, onEvent: onEvent, body: body)
        if let priority {
            // The work is captured weakly: the handle keeps its observers (and the handle is passed in).
            priority.observe { [weak work] handle in work?.setPriority(id, to: handle.value) }
            // A change between the join and the line above is caught here.
            work.setPriority(id, to: priority.value)
        }
        return try await work.wait(id)
    }

    /// Cancels every work: their subscribers get `CancellationError`.
    func cancelAll() {
        let all = works.withLock { works in
            defer {
                works = Table()
                size.store(0, ordering: .relaxed)
            }
            // An aliased work appears twice: once under the key it was made with.
            return works.byKey.compactMap { key, entry in key == entry.key ? entry.work : nil }
        }
        for work in all { work.cancelEverything() }
    }

    private func forget(_ key: Key, alias: Key?) {
        // Only the work that ended is forgotten: a newer one may have taken its key. An alias
        // never outlives its work (a caller would get the old outcome).
        works.withLock { works in
            works.changed()
            if let entry = works.byKey[key], entry.work.isOver {
                works.byKey[key] = nil
                size.subtract(1, ordering: .relaxed)
            }
            if let alias, let entry = works.byKey[alias], entry.work.isOver { works.byKey[alias] = nil }
        }
    }
}

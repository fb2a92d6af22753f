/// The states of one shared work and their transitions, as a value: no lock, no task and no
/// caller's closure is touched here. Each mutating method returns what its caller must do once
/// the lock around the machine is released: resume these waiters, call these event handlers,
/// cancel this task, tell the table the work ended. (The shape of AsyncHTTPClient's
/// `Transaction.StateMachine`.)
///
/// It is generic over the handles it stores, so that it can be unit-tested with plain values:
/// `Handler` is an event subscriber's callback, `Waiter` a suspended caller's continuation,
/// `Worker` the work's task.
///
///     waiting ──deliver──▶ delivered ──finish──▶ finished
///        │  └────────────────finish────────────────▲
///        └─last subscriber leaves / cancelEverything──▶ abandoned
///
/// `waiting` owns the subscribers (and the continuations of those suspended in `wait`);
/// `delivered` and `finished` own only the outcome, which a caller joining then gets at once.
struct SharedWorkStateMachine<Event, Output, Handler, Waiter, Worker> {
    /// A caller subscribed to the work. Plain bits when `Waiter` is (a continuation is): the
    /// array of a thousand subscribers is then copied and freed without a call per element
    /// (the event handlers and backlogs, which few callers have, are kept apart: `Watcher`).
    struct Subscriber {
        /// Set while the caller is suspended in `wait`; resumed exactly once, by whoever takes it out.
        var waiter: Waiter?
        /// Whether the caller is still being given the history (its new events wait in its
        /// watcher's backlog).
        var replaying = false
        /// How urgently this caller wants the work.
        var priority: ImageLoaderPriority = .normal
    }

    /// A subscriber that watches events.
    struct Watcher {
        let id: Int
        let handler: Handler
        /// Events sent while the subscriber was still being given the history: delivered by the
        /// joining caller itself, before it starts receiving events directly.
        var backlog: [Event] = []
    }

    /// The subscribers of a work that has no outcome yet.
    struct Subscribers {
        /// By id, in the order they joined; nil for one that left.
        var byID: [Subscriber?] = []
        /// Every event sent so far, for the works that replay them to late subscribers.
        var history: [Event] = []
        /// Live subscribers per priority (their sum is the number of live subscribers; not
        /// kept apart: one more field made every transition copy the whole state out and back).
        var perPriority = PriorityCounts()
        /// The live subscribers that watch events, in the order they joined (so by id).
        var watchers: [Watcher] = []

        /// Where subscriber `id` is in `watchers` (a binary search: ids grow as they join).
        func watcherIndex(_ id: Int) -> Int? {
            var low = 0, high = watchers.count
            while low < high {
                let middle = (low + high) / 2
                if watchers[middle].id < id { low = middle + 1 } else { high = middle }
            }
            return low < watchers.count && watchers[low].id == id ? low : nil
        }

        /// The highest priority a live subscriber asks for (normal when none is left).
        var priority: ImageLoaderPriority {
            if perPriority.high > 0 { return .high }
            if perPriority.normal > 0 || perPriority.low == 0 { return .normal }
            return .low
        }
    }

    /// Counts by priority, inline (an array would be a heap object, checked for uniqueness at
    /// every change by every joining caller).
    struct PriorityCounts {
        var low = 0, normal = 0, high = 0

        var total: Int { low + normal + high }

        subscript(_ priority: ImageLoaderPriority) -> Int {
            get {
                switch priority {
                case .low: low
                case .normal: normal
                case .high: high
                }
            }
            set {
                switch priority {
                case .low: low = newValue
                case .normal: normal = newValue
                case .high: high = newValue
                }
            }
        }
    }

    enum State {
        case waiting(Subscribers)
        /// The outcome was handed out early; the work still runs its last steps (a store).
        case delivered(Result<Output, any Error>)
        case finished(Result<Output, any Error>)
        /// Every subscriber left before the end, or everything was cancelled.
        case abandoned
        /// Held only inside a transition, while the subscribers are taken out to be changed, so
        /// that the state does not keep a second reference to their storage (which would make
        /// each change copy every subscriber: 1,000 joining callers would cost a million copies).
        case modifying
    }

    private(set) var state: State = .waiting(Subscribers())
    private(set) var worker: Worker?
    /// Which events are kept for late subscribers; nil keeps none.
    let replays: ((Event) -> Bool)?
    /// The work's priority: the highest of its live subscribers'. It only changes while the
    /// work waits; a transition that changes it says so (`priorityChanged`), and the holder
    /// passes the new value on (to the work's own requests).
    private(set) var priority: ImageLoaderPriority = .normal
    /// After `deliver`: what a subscriber that had joined by then but was not yet waiting gets
    /// (`early`), and the first id given after it (subscribers from there on get `late`). Kept
    /// beside the state, which stays small: every transition moves it.
    private var early: Output?
    private var firstLateID = 0

    /// A machine that replays to late subscribers the events `replays` accepts (none when nil).
    init(replays: ((Event) -> Bool)?) { self.replays = replays }

    /// A machine that replays every event to late subscribers, or none.
    init(replaysEvents: Bool) { self.init(replays: replaysEvents ? { _ in true } : nil) }

    // MARK: Starting

    /// Records the work's task; true when it must be cancelled at once (abandoned already).
    mutating func started(_ worker: Worker) -> Bool {
        self.worker = worker
        if case .abandoned = state { return true }
        return false
    }

    /// The work's first stage (run before it waits for admission) missed: the work's task is
    /// forgotten, so that abandoning the work from now on withdraws it from admission. False
    /// when the work was abandoned meanwhile (it must not go on).
    mutating func firstStageMissed() -> Bool {
        if case .abandoned = state { return false }
        worker = nil
        return true
    }

    // MARK: Joining

    enum ReserveAction {
        /// Subscribed as `id`; give `replay` to its handler (then call `replayed(id)` until it
        /// returns no more events).
        case subscribed(id: Int, replay: [Event], priorityChanged: Bool)
        /// The outcome is known: `wait(id)` returns it at once.
        case ended(id: Int)
        /// The work was abandoned: start another.
        case abandoned
    }

    /// A new subscriber, with `onEvent` if it watches events, at `priority`.
    mutating func reserve(onEvent: Handler?, priority: ImageLoaderPriority = .normal) -> ReserveAction {
        switch state {
        case .waiting(var subscribers):
            state = .modifying
            let id = subscribers.byID.count
            let replay = onEvent != nil ? subscribers.history : []
            subscribers.byID.append(Subscriber(waiter: nil, replaying: !replay.isEmpty, priority: priority))
            if let onEvent { subscribers.watchers.append(Watcher(id: id, handler: onEvent)) }
            subscribers.perPriority[priority] += 1
            let changed = updatePriority(subscribers)
            state = .waiting(subscribers)
            return .subscribed(id: id, replay: replay, priorityChanged: changed)
        case .delivered, .finished:
            return .ended(id: -1)
        case .abandoned, .modifying:
            return .abandoned
        }
    }

    /// After a replay: the events sent meanwhile (to be given in turn), or none, and then the
    /// subscriber receives events directly.
    mutating func replayed(_ id: Int) -> [Event] {
        guard case .waiting(var subscribers) = state, id >= 0, id < subscribers.byID.count,
              subscribers.byID[id] != nil else { return [] }
        state = .modifying
        var backlog: [Event] = []
        if let index = subscribers.watcherIndex(id) {
            swap(&backlog, &subscribers.watchers[index].backlog)
        }
        subscribers.byID[id]?.replaying = !backlog.isEmpty
        state = .waiting(subscribers)
        return backlog
    }

    /// Subscriber `id` now wants `priority`; true when the work's priority changed.
    mutating func setPriority(_ id: Int, to priority: ImageLoaderPriority) -> Bool {
        guard case .waiting(var subscribers) = state, id >= 0, id < subscribers.byID.count,
              let old = subscribers.byID[id]?.priority, old != priority else { return false }
        state = .modifying
        subscribers.byID[id]?.priority = priority
        subscribers.perPriority[old] -= 1
        subscribers.perPriority[priority] += 1
        let changed = updatePriority(subscribers)
        state = .waiting(subscribers)
        return changed
    }

    private mutating func updatePriority(_ subscribers: Subscribers) -> Bool {
        let new = subscribers.priority
        guard new != priority else { return false }
        priority = new
        return true
    }

    /// Whether any subscriber watches events.
    var hasEventSubscribers: Bool {
        guard case .waiting(let subscribers) = state else { return false }
        return !subscribers.watchers.isEmpty
    }

    // MARK: Events

    /// The handlers to give `event` to (in the order the subscribers joined).
    mutating func send(_ event: Event) -> [Handler] {
        guard case .waiting(var subscribers) = state else { return [] }
        state = .modifying
        if let replays, replays(event) { subscribers.history.append(event) }
        var handlers: [Handler] = []
        for index in subscribers.watchers.indices {
            if subscribers.byID[subscribers.watchers[index].id]?.replaying == true {
                subscribers.watchers[index].backlog.append(event)
            } else {
                handlers.append(subscribers.watchers[index].handler)
            }
        }
        state = .waiting(subscribers)
        return handlers
    }

    // MARK: Waiting and leaving

    enum WaitAction {
        /// Suspended: the waiter is kept and resumed later by another transition.
        case suspended
        /// Resume the waiter with this now (a subscriber that already left, whose task was
        /// cancelled before it waited, gets `CancellationError`).
        case resume(Result<Output, any Error>)
    }

    /// Subscriber `id` waits for the outcome with `waiter`. A cancelled caller has already left
    /// (`leave`) by the time it waits: its task's cancellation handler runs first.
    mutating func wait(_ id: Int, waiter: Waiter) -> WaitAction {
        switch state {
        case .waiting(var subscribers):
            guard id >= 0, id < subscribers.byID.count, subscribers.byID[id] != nil else {
                return .resume(.failure(CancellationError()))
            }
            state = .modifying
            subscribers.byID[id]?.waiter = waiter
            state = .waiting(subscribers)
            return .suspended
        case .delivered(let outcome), .finished(let outcome):
            if let early, id >= 0, id < firstLateID { return .resume(.success(early)) }
            return .resume(outcome)
        case .abandoned, .modifying:
            return .resume(.failure(CancellationError()))
        }
    }

    enum LeaveAction {
        /// Nothing to resume; `priorityChanged` when the work's priority fell.
        case none(priorityChanged: Bool)
        /// Resume this waiter with the leaving error; `priorityChanged` as above.
        case resume(Waiter, priorityChanged: Bool)
        /// The last subscriber left: resume its waiter (if it was suspended), cancel the work
        /// and tell the table.
        case abandon(Waiter?, worker: Worker?)
    }

    /// Subscriber `id` leaves: its task was cancelled, or its deadline passed.
    mutating func leave(_ id: Int) -> LeaveAction {
        guard case .waiting(var subscribers) = state, id >= 0, id < subscribers.byID.count,
              let subscriber = subscribers.byID[id] else { return .none(priorityChanged: false) }
        state = .modifying
        let (abandon, changed) = remove(id, from: &subscribers)
        if abandon { return .abandon(subscriber.waiter, worker: worker) }
        if let waiter = subscriber.waiter { return .resume(waiter, priorityChanged: changed) }
        return .none(priorityChanged: changed)
    }

    /// Takes subscriber `id` out: `abandoned` (and the state is `abandoned`) when it was the
    /// last; `priorityChanged` when the work's priority fell with it.
    private mutating func remove(_ id: Int, from subscribers: inout Subscribers) -> (abandoned: Bool, priorityChanged: Bool) {
        if let priority = subscribers.byID[id]?.priority { subscribers.perPriority[priority] -= 1 }
        subscribers.byID[id] = nil
        if let index = subscribers.watcherIndex(id) { subscribers.watchers.remove(at: index) }
        if subscribers.perPriority.total == 0 {
            state = .abandoned
            return (true, false)
        }
        let changed = updatePriority(subscribers)
        state = .waiting(subscribers)
        return (false, changed)
    }

    // MARK: Ending

    /// Hands `output` to every waiting subscriber now; the work keeps running. A subscriber
    /// that had joined but not started waiting gets `early` when it waits, and one joining from
    /// now on gets `late` (both by default `output`; for a load, `late` is the image as a memory
    /// hit gives it, and `early` the result without the pickup count, which only the waiters
    /// resumed here are part of). Returns the waiters to resume with `output`, in the order
    /// they joined.
    mutating func deliver(_ output: Output, late: Output? = nil, early: Output? = nil) -> [Waiter] {
        guard case .waiting(let subscribers) = state else { return [] }
        state = .delivered(.success(late ?? output))
        self.early = early ?? output
        firstLateID = subscribers.byID.count
        return subscribers.byID.compactMap { $0?.waiter }
    }

    struct FinishAction {
        /// Resume these with the outcome.
        var waiters: [Waiter]
        /// The outcome they get (the delivered one, when there was one).
        var outcome: Result<Output, any Error>
        /// Tell the table the work ended (false when it was abandoned: the table knows).
        var ends: Bool
    }

    /// The work's body returned `outcome`.
    mutating func finish(_ outcome: Result<Output, any Error>) -> FinishAction {
        switch state {
        case .waiting(let subscribers):
            state = .finished(outcome)
            return FinishAction(waiters: subscribers.byID.compactMap { $0?.waiter }, outcome: outcome, ends: true)
        case .delivered(let delivered):
            state = .finished(delivered)
            return FinishAction(waiters: [], outcome: delivered, ends: true)
        case .finished(let first):
            return FinishAction(waiters: [], outcome: first, ends: false)
        case .abandoned, .modifying:
            return FinishAction(waiters: [], outcome: outcome, ends: false)
        }
    }

    /// Abandons the work whoever waits: the waiters to resume with `CancellationError` and the
    /// task to cancel.
    mutating func cancelEverything() -> (waiters: [Waiter], worker: Worker?) {
        guard case .waiting(let subscribers) = state else { return ([], nil) }
        state = .abandoned
        return (subscribers.byID.compactMap { $0?.waiter }, worker)
    }

    /// Whether the work finished or was abandoned (a delivered work is still running).
    var isOver: Bool {
        switch state {
        case .finished, .abandoned: true
        case .waiting, .delivered, .modifying: false
        }
    }
}

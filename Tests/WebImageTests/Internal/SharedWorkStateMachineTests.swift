import Testing
@testable import WebImage

/// Every transition of the shared-work state machine, with plain values for the handlers,
/// waiters and the task: no server, no task, no lock (as AsyncHTTPClient tests its
/// `Transaction.StateMachine`).
@Suite struct SharedWorkStateMachineTests {
    /// Events are strings, the output an Int; handlers, waiters and the worker are named by strings.
    typealias Machine = SharedWorkStateMachine<String, Int, String, String, String>

    struct Failure: Error, Equatable {}

    func subscribe(_ machine: inout Machine, _ handler: String? = nil, priority: ImageLoaderPriority = .normal) -> Int {
        guard case .subscribed(let id, _, _) = machine.reserve(onEvent: handler, priority: priority) else {
            Issue.record("not subscribed")
            return -1
        }
        return id
    }

    func value(_ result: Result<Int, any Error>) -> Int? { try? result.get() }

    @Test func waitersGetTheOutputInTheOrderTheyJoined() {
        var machine = Machine(replaysEvents: false)
        #expect(machine.started("task") == false)
        let a = subscribe(&machine), b = subscribe(&machine), c = subscribe(&machine)
        guard case .suspended = machine.wait(b, waiter: "B"),
              case .suspended = machine.wait(a, waiter: "A") else { Issue.record("not suspended"); return }
        let finish = machine.finish(.success(42))
        #expect(finish.waiters == ["A", "B"] && value(finish.outcome) == 42 && finish.ends)
        #expect(machine.isOver)
        // A subscriber that had not waited yet gets the outcome at once.
        guard case .resume(let late) = machine.wait(c, waiter: "C") else { Issue.record("suspended after the end"); return }
        #expect(value(late) == 42)
    }

    @Test func joinAfterFinishGetsTheOutcomeAtOnce() {
        var machine = Machine(replaysEvents: true)
        _ = subscribe(&machine)
        _ = machine.finish(.failure(Failure()))
        guard case .ended(let id) = machine.reserve(onEvent: "late") else { Issue.record("joined a finished work as waiting"); return }
        guard case .resume(let outcome) = machine.wait(id, waiter: "L") else { Issue.record("suspended"); return }
        #expect(throws: Failure.self) { try outcome.get() }
        #expect(machine.send("ignored").isEmpty && !machine.hasEventSubscribers)
    }

    @Test func theLastSubscriberLeavingAbandonsTheWork() {
        var machine = Machine(replaysEvents: false)
        _ = machine.started("task")
        let a = subscribe(&machine), b = subscribe(&machine)
        _ = machine.wait(a, waiter: "A")
        _ = machine.wait(b, waiter: "B")
        guard case .resume("A", priorityChanged: false) = machine.leave(a) else { Issue.record("A was not resumed alone"); return }
        #expect(!machine.isOver)
        guard case .abandon("B", worker: "task") = machine.leave(b) else { Issue.record("not abandoned"); return }
        #expect(machine.isOver)
        guard case .abandoned = machine.reserve(onEvent: nil) else { Issue.record("joined an abandoned work"); return }
        // The body ending later changes nothing, and the table is not told twice.
        let finish = machine.finish(.success(1))
        #expect(finish.waiters.isEmpty && !finish.ends)
        // Leaving twice is harmless.
        guard case .none(priorityChanged: false) = machine.leave(b) else { Issue.record("left twice"); return }
    }

    @Test func aWorkAbandonedBeforeItsTaskStartsCancelsItAtOnce() {
        var machine = Machine(replaysEvents: false)
        let a = subscribe(&machine)
        guard case .abandon(nil, worker: nil) = machine.leave(a) else { Issue.record("not abandoned"); return }
        #expect(machine.started("task") == true, "the task must be cancelled as soon as it exists")
    }

    @Test func aCallerCancelledBeforeItWaitsLeavesWithoutSuspending() {
        var machine = Machine(replaysEvents: false)
        _ = machine.started("task")
        let a = subscribe(&machine), b = subscribe(&machine)
        // A cancelled caller leaves (its cancellation handler runs first), then waits: it is
        // resumed with CancellationError at once, and the work goes on for the other.
        guard case .none(priorityChanged: false) = machine.leave(a) else { Issue.record("the first to leave abandoned"); return }
        guard case .resume(let outcome) = machine.wait(a, waiter: "A") else { Issue.record("a cancelled waiter was suspended"); return }
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(!machine.isOver)
        // The last one to leave abandons the work and its task, and its wait is not suspended.
        guard case .abandon(nil, worker: "task") = machine.leave(b) else { Issue.record("the last to leave did not abandon"); return }
        guard case .resume(let last) = machine.wait(b, waiter: "B") else { Issue.record("suspended after abandoning"); return }
        #expect(throws: CancellationError.self) { try last.get() }
        #expect(machine.isOver)
    }

    @Test func cancelDuringDeliverAndJoinDuringTheStore() {
        var machine = Machine(replaysEvents: false)
        _ = machine.started("task")
        let a = subscribe(&machine), b = subscribe(&machine)
        _ = machine.wait(a, waiter: "A")
        // B is cancelled while the output is being delivered: it had not waited, so it is not
        // among the waiters, and leaving now changes nothing.
        let delivered = machine.deliver(7)
        #expect(delivered == ["A"])
        guard case .none(priorityChanged: false) = machine.leave(b) else { Issue.record("leaving after delivery did something"); return }
        #expect(!machine.isOver, "a delivered work still runs its store")
        // A caller joining during the store gets the delivered output at once.
        guard case .ended(let late) = machine.reserve(onEvent: nil),
              case .resume(let outcome) = machine.wait(late, waiter: "L") else { Issue.record("not ended"); return }
        #expect(value(outcome) == 7)
        // With a late output (a load's memory hit), the waiters get the output and later callers the late one.
        var other = Machine(replaysEvents: false)
        let w = subscribe(&other)
        _ = other.wait(w, waiter: "W")
        #expect(other.deliver(1, late: 2) == ["W"])
        guard case .ended(let joiner) = other.reserve(onEvent: nil),
              case .resume(let lateOutcome) = other.wait(joiner, waiter: "J") else { Issue.record("not ended"); return }
        #expect(value(lateOutcome) == 2)
        // The body's own result after delivery does not replace what was delivered.
        let finish = machine.finish(.failure(Failure()))
        #expect(finish.waiters.isEmpty && finish.ends && value(finish.outcome) == 7)
        #expect(machine.isOver)
        // A second deliver or finish does nothing.
        #expect(machine.deliver(8).isEmpty)
        #expect(!machine.finish(.success(9)).ends)
    }

    /// A subscriber that joined before the delivery but had not started waiting (the work
    /// outran its caller) is one of the work's callers: it gets `early` (a load's own result),
    /// also once the work has finished; only subscribers that join after the delivery get
    /// `late` (a load's memory hit).
    @Test func aSubscriberThatJoinedBeforeTheDeliveryButWaitsAfterItGetsTheEarlyOutput() {
        var machine = Machine(replaysEvents: false)
        _ = machine.started("task")
        let waiting = subscribe(&machine), outrun = subscribe(&machine), outrunAfterEnd = subscribe(&machine)
        _ = machine.wait(waiting, waiter: "W")
        #expect(machine.deliver(1, late: 2, early: 3) == ["W"])
        guard case .resume(let early) = machine.wait(outrun, waiter: "O") else { Issue.record("suspended"); return }
        #expect(value(early) == 3)
        guard case .ended(let joiner) = machine.reserve(onEvent: nil),
              case .resume(let late) = machine.wait(joiner, waiter: "J") else { Issue.record("not ended"); return }
        #expect(value(late) == 2)
        _ = machine.finish(.success(1))
        guard case .resume(let afterEnd) = machine.wait(outrunAfterEnd, waiter: "E"),
              case .ended(let lastJoiner) = machine.reserve(onEvent: nil),
              case .resume(let lastLate) = machine.wait(lastJoiner, waiter: "L") else { Issue.record("not ended"); return }
        #expect(value(afterEnd) == 3 && value(lastLate) == 2)
    }

    @Test func cancelEverythingResumesEveryWaiterAndCancelsTheTask() {
        var machine = Machine(replaysEvents: false)
        _ = machine.started("task")
        let a = subscribe(&machine), b = subscribe(&machine)
        _ = machine.wait(a, waiter: "A")
        _ = machine.wait(b, waiter: "B")
        let (waiters, worker) = machine.cancelEverything()
        #expect(waiters == ["A", "B"] && worker == "task")
        #expect(machine.isOver)
        #expect(machine.cancelEverything().waiters.isEmpty, "only once")
    }

    @Test func eventsGoToWatchersAndALateWatcherGetsTheHistoryFirst() {
        var machine = Machine(replaysEvents: true)
        let quiet = subscribe(&machine)
        _ = subscribe(&machine, "early")
        #expect(machine.hasEventSubscribers)
        #expect(machine.send("e1") == ["early"])
        #expect(machine.send("e2") == ["early"])
        // A late watcher is handed the history to replay; events sent meanwhile wait for it.
        guard case .subscribed(let late, let replay, _) = machine.reserve(onEvent: "late") else { Issue.record("not subscribed"); return }
        #expect(replay == ["e1", "e2"])
        #expect(machine.send("e3") == ["early"], "the late watcher is still replaying")
        #expect(machine.replayed(late) == ["e3"], "what came during the replay comes next")
        #expect(machine.replayed(late).isEmpty)
        #expect(machine.send("e4") == ["early", "late"], "then events go to it directly")
        _ = quiet
        // Without replaying, a late watcher gets only what comes after it joined.
        var plain = Machine(replaysEvents: false)
        _ = subscribe(&plain, "first")
        _ = plain.send("x")
        guard case .subscribed(_, let nothing, _) = plain.reserve(onEvent: "second") else { Issue.record("not subscribed"); return }
        #expect(nothing.isEmpty)
        #expect(plain.send("y") == ["first", "second"])
    }

    @Test func priorityFollowsTheMostUrgentLiveSubscriber() {
        var machine = Machine(replaysEvents: false)
        _ = machine.started("task")
        // A low caller starts the work: it runs low.
        guard case .subscribed(let low, _, priorityChanged: true) = machine.reserve(onEvent: nil, priority: .low) else {
            Issue.record("the first low subscriber did not lower the work"); return
        }
        #expect(machine.priority == .low)
        // A high caller joins: the work rises (Nuke's lowPriorityRequestEscalatesWhenHigherPriorityJoins).
        guard case .subscribed(let high, _, priorityChanged: true) = machine.reserve(onEvent: nil, priority: .high) else {
            Issue.record("a high subscriber did not raise the work"); return
        }
        #expect(machine.priority == .high)
        // Another low one changes nothing.
        guard case .subscribed(let low2, _, priorityChanged: false) = machine.reserve(onEvent: nil, priority: .low) else {
            Issue.record("a low subscriber changed a high work"); return
        }
        _ = machine.wait(high, waiter: "H")
        // The high caller leaves: the work falls back to low.
        guard case .resume("H", priorityChanged: true) = machine.leave(high) else { Issue.record("did not fall back"); return }
        #expect(machine.priority == .low)
        // A caller changes its own priority: up, then back.
        var changed = machine.setPriority(low, to: .normal)
        #expect(changed && machine.priority == .normal)
        changed = machine.setPriority(low, to: .normal)
        #expect(!changed, "no change")
        changed = machine.setPriority(low2, to: .low)
        #expect(!changed, "no change")
        changed = machine.setPriority(low, to: .low)
        #expect(changed && machine.priority == .low)
        // Cancelled before waiting: the leaving high caller lowers the work too.
        let urgent = subscribe(&machine, priority: .high)
        #expect(machine.priority == .high)
        guard case .none(priorityChanged: true) = machine.leave(urgent) else {
            Issue.record("a cancelled high caller did not lower the work"); return
        }
        guard case .resume = machine.wait(urgent, waiter: "U") else { Issue.record("a cancelled high caller was suspended"); return }
        #expect(machine.priority == .low)
        // After the end nothing changes.
        _ = machine.finish(.success(1))
        changed = machine.setPriority(low, to: .high)
        #expect(!changed && machine.priority == .low)
    }
}

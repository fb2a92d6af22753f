import Synchronization
import Testing
@testable import WebImage

/// The manager's admission gate on its own: how many start, in which order, and what leaves it.
@Suite struct LoadAdmissionTests {
    /// Records the order entries start in.
    final class Starts: Sendable {
        let order = Mutex<[Int]>([])
        func start(_ id: Int) -> @Sendable () -> Void { { self.order.withLock { $0.append(id) } } }
        var value: [Int] { order.withLock { $0 } }
    }

    @Test func atMostTheLimitStartAndAnEndPassesItsSlotOn() {
        let gate = LoadAdmission(limit: 2)
        let starts = Starts()
        for id in 1...5 { gate.enqueue(id, level: { 1 }, lifo: false, start: starts.start(id)) }
        #expect(starts.value == [1, 2])
        #expect(gate.counts == (2, 3))
        gate.finished()
        #expect(starts.value == [1, 2, 3], "the slot went to the oldest entry")
        #expect(gate.counts == (2, 2))
        gate.finished(); gate.finished(); gate.finished()
        #expect(starts.value == [1, 2, 3, 4, 5])
        #expect(gate.counts == (1, 0))
        gate.finished()
        #expect(gate.counts == (0, 0))
        // A free slot with nobody waiting starts at once.
        gate.enqueue(6, level: { 0 }, lifo: false, start: starts.start(6))
        #expect(starts.value.last == 6 && gate.counts == (1, 0))
    }

    @Test func higherLevelsFirstThenFIFOOrLIFO() {
        for lifo in [false, true] {
            let gate = LoadAdmission(limit: 1)
            let starts = Starts()
            gate.enqueue(0, level: { 1 }, lifo: lifo, start: starts.start(0))   // runs
            let plan = [(1, 1), (2, 0), (3, 1), (4, 2), (5, 1)]
            for (id, level) in plan { gate.enqueue(id, level: { level }, lifo: lifo, start: starts.start(id)) }
            for _ in plan { gate.finished() }
            #expect(starts.value == (lifo ? [0, 4, 5, 3, 1, 2] : [0, 4, 1, 3, 5, 2]), "lifo \(lifo)")
        }
    }

    @Test func aWithdrawnEntryNeverStartsAndAMovedOneFollowsItsLevel() {
        let gate = LoadAdmission(limit: 1)
        let starts = Starts()
        gate.enqueue(0, level: { 1 }, lifo: false, start: starts.start(0))
        for id in 1...3 { gate.enqueue(id, level: { 1 }, lifo: false, start: starts.start(id)) }
        gate.withdraw(2)
        gate.move(3) { 2 }
        gate.withdraw(0)   // started already: nothing to withdraw
        #expect(gate.counts == (1, 2))
        gate.finished(); gate.finished(); gate.finished()
        #expect(starts.value == [0, 3, 1])
        #expect(gate.counts == (0, 0))
    }

    /// An entry that was taken is no longer referenced by the queue (it held its whole work,
    /// finished image included, until the queue's next compaction).
    @Test func aTakenEntryIsReleasedAtOnce() {
        final class Payload: Sendable {}
        struct Held: QueuedByID {
            let id: Int
            let payload: Payload
        }
        var queues = PriorityQueues<Held>()
        weak var first: Payload?
        do {
            let payload = Payload()
            first = payload
            queues.append(Held(id: 0, payload: payload), level: 1)
        }
        for id in 1..<1_000 { queues.append(Held(id: id, payload: Payload()), level: 1) }
        #expect(first != nil)
        #expect(queues.next(lifo: false)?.id == 0)
        #expect(first == nil, "the queue let go of the element it handed out")
    }
}

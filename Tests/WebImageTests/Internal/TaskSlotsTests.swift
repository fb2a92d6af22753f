import Foundation
import Synchronization
import Testing
@testable import WebImage

/// The counting semaphore that bounds decodes: a slot goes to the longest waiter, a cancelled
/// waiter is skipped, and a long queue (taken from its front without moving the rest) keeps
/// its order.
@Suite struct TaskSlotsTests {
    /// The waiters that got a slot, in the order they got it.
    final class Granted: Sendable {
        let list = Mutex<[Int]>([])
        func append(_ n: Int) { list.withLock { $0.append(n) } }
        var values: [Int] { list.withLock { $0 } }
    }

    @Test(.timeLimit(.minutes(1)))
    func slotsGoToTheWaitersInOrderAndSkipTheCancelled() async {
        let slots = TaskSlots(1)
        #expect(await slots.acquire())
        let granted = Granted()
        var tasks: [Task<Bool, Never>] = []
        for n in 0..<3 {
            tasks.append(Task {
                let got = await slots.acquire()
                if got { granted.append(n) }
                return got
            })
            while slots.waiterCount < n + 1 { await Task.yield() }
        }
        tasks[1].cancel()
        #expect(await tasks[1].value == false, "a cancelled waiter gets no slot")
        #expect(slots.waiterCount == 2)
        slots.release()
        #expect(await tasks[0].value)
        slots.release()
        #expect(await tasks[2].value, "the cancelled waiter is skipped")
        #expect(granted.values == [0, 2])
        #expect(slots.waiterCount == 0)
        slots.release()
        #expect(await slots.acquire(), "a free slot with nobody waiting is taken at once")
    }

    @Test(.timeLimit(.minutes(1)))
    func aLongQueueIsServedFirstComeFirstServed() async {
        let slots = TaskSlots(1)
        #expect(await slots.acquire())
        let granted = Granted()
        var tasks: [Task<Bool, Never>] = []
        let count = 300
        for n in 0..<count {
            tasks.append(Task {
                let got = await slots.acquire()
                if got { granted.append(n) }
                return got
            })
            while slots.waiterCount < n + 1 { await Task.yield() }
        }
        // Every tenth waiter leaves before its turn.
        for n in stride(from: 5, to: count, by: 10) {
            tasks[n].cancel()
            #expect(await tasks[n].value == false)
        }
        let served = (0..<count).filter { $0 % 10 != 5 }
        for (index, _) in served.enumerated() {
            slots.release()
            while granted.values.count < index + 1 { await Task.yield() }
        }
        #expect(granted.values == served)
        #expect(slots.waiterCount == 0)
    }
}

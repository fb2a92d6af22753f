import Foundation
import Synchronization
import Testing
@testable import WebImage

/// The gate that holds new transfers back while downloaded bodies wait for a decode.
@Suite struct BacklogGateTests {
    final class Wakes: Sendable { let count = Atomic<Int>(0) }

    @Test func roomAndWakingUpWhenTheBacklogFallsBackToTheLimit() {
        let gate = BacklogGate(limit: 100)
        let wakes = Wakes()
        gate.onRoom(ObjectIdentifier(wakes)) { wakes.count.add(1, ordering: .relaxed) }
        #expect(gate.hasRoom)
        gate.add(150)
        #expect(!gate.hasRoom)
        gate.remove(40)   // 110: still over
        #expect(!gate.hasRoom && wakes.count.load(ordering: .relaxed) == 0)
        gate.remove(10)   // 100: room again, one wake-up
        #expect(gate.hasRoom && wakes.count.load(ordering: .relaxed) == 1)
        gate.remove(100)  // under the limit already: no second wake-up
        #expect(gate.bytes == 0 && wakes.count.load(ordering: .relaxed) == 1)
    }
}

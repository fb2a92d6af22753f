import Synchronization
import Testing
@testable import WebImage

/// The background writes `waitForPendingStores()` waits for, on their own.
@Suite struct PendingStoresTests {
    /// Whether a write ran.
    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// A reserved write that starts while a wait is looking must be waited for: the wait once
    /// found no write running, then (a second look) no reservation left, because the write had
    /// just moved from the one to the other, and returned before it (a rare CI failure of
    /// `SharedCacheTierTests.anEntryOverTheSizeLimitIsSkipped`). Many rounds, each racing a
    /// write's start against a wait; against the code before the fix it failed in about one
    /// run of three (a race: a pass does not prove its absence).
    @Test func aWaitNeverReturnsBeforeAReservedWriteThatStartsMeanwhile() async {
        let stores = PendingStores()
        var early = 0
        for round in 0..<100_000 {
            let done = Flag()
            let reservation = stores.reserve()
            let starter = Task.detached {
                // A spin of varying length spreads the start over the moments the wait looks.
                var spin = 0
                while spin < round % 1_000 { spin &+= 1 }
                stores.start({ done.value.store(true, ordering: .releasing) }, reservation: reservation)
            }
            await stores.waitForAll()
            if !done.value.load(ordering: .acquiring) { early += 1 }
            await starter.value
            await stores.waitForAll()
        }
        #expect(early == 0, "waits that returned before their write")
    }
}

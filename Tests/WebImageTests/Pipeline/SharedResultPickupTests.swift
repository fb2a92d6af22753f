import Foundation
import Synchronization
import Testing
@testable import WebImage

/// A work that delivered early waits until each caller it resumed has taken the result.
@Suite struct SharedResultPickupTests {
    static func result() -> SharedResult {
        SharedResult(ImageResult(image: Image(bitmap: Bitmap(width: 1, height: 1)), data: nil, cacheType: .none,
                                 url: URL(string: "http://example.com/a.png")!), countsPickups: true)
    }

    @Test func callersThatTookItBeforeTheWorkAskedDoNotMakeItWait() async {
        let shared = Self.result()
        shared.pickedUp()
        shared.pickedUp()
        await shared.waitForPickups(2)   // returns at once
        await shared.waitForPickups(0)
    }

    @Test func theWorkResumesAtTheLastPickupAndNotBefore() async throws {
        let shared = Self.result()
        shared.pickedUp()   // one of three took it already
        final class Flag: Sendable { let value = Atomic<Bool>(false) }
        let waited = Flag()
        let work = Task {
            await shared.waitForPickups(3)
            waited.value.store(true, ordering: .relaxed)
        }
        try await Task.sleep(for: .milliseconds(50))
        shared.pickedUp()
        try await Task.sleep(for: .milliseconds(50))
        let early = waited.value.load(ordering: .relaxed)
        #expect(!early, "one caller has not taken it yet")
        shared.pickedUp()
        await work.value
        let done = waited.value.load(ordering: .relaxed)
        #expect(done)
        shared.pickedUp()   // a late joiner given the same result: nothing to resume
    }

    @Test(.timeLimit(.minutes(2))) func aResultThatDoesNotCountPickupsNeverMakesTheWorkWait() async {
        let shared = SharedResult(Self.result().result)
        await shared.waitForPickups(5)
        shared.pickedUp()
    }

    @Test func manyCallersOnBothCores() async {
        for _ in 0..<50 {
            let shared = Self.result()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<100 { group.addTask { shared.pickedUp() } }
                group.addTask { await shared.waitForPickups(100) }
            }
        }
    }
}

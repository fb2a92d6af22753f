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

/// The HTTP loader under a gate: a finished body counts from the moment its transfer ends (on
/// the loader's thread, before the caller's task runs), and transfers queued behind it wait
/// until the body leaves the backlog.
@Suite struct LoaderBacklogTests {
    @Test func aFinishedBodyCountsUntilItsClaimIsReleasedOrDropped() async throws {
        let server = TestHTTPServer()
        try await server.start()
        server.route("/a", .respond(body: HTTPImageLoaderTests.big))
        let loader = HTTPImageLoader()
        let gate = BacklogGate(limit: 1 << 20)
        var request = ImageLoaderRequest(url: server.url("/a"))
        request.backlog = gate
        var (data, response) = try await loader.data(for: request)
        #expect(data.count == HTTPImageLoaderTests.big.count)
        #expect(gate.bytes == data.count, "counted by the loader as the transfer ended")
        let claim = try #require(response.backlogClaim)
        claim.release()
        claim.release()   // once only
        #expect(gate.bytes == 0)
        // A claim nobody releases goes with the last response that holds it.
        (data, response) = try await loader.data(for: request)
        #expect(gate.bytes == data.count)
        response.backlogClaim = nil
        #expect(gate.bytes == 0)
        await server.stop()
    }

    @Test func aFullBacklogHoldsTheNextTransferUntilTheBodyLeaves() async throws {
        let server = TestHTTPServer()
        try await server.start()
        server.route("/big", .respond(body: HTTPImageLoaderTests.big))
        server.route("/next", .respond(body: HTTPImageLoaderTests.png))
        let loader = HTTPImageLoader()
        // 300 KB bodies over a 100 KB limit: one finished body fills the backlog.
        let gate = BacklogGate(limit: 100_000)
        var first = ImageLoaderRequest(url: server.url("/big"))
        first.backlog = gate
        let (_, response) = try await loader.data(for: first)
        #expect(!gate.hasRoom)
        var second = ImageLoaderRequest(url: server.url("/next"))
        second.backlog = gate
        let next = Task { try await loader.data(for: second) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(server.requestCount("/next") == 0, "held while the backlog is full")
        response.backlogClaim?.release()
        let (body, _) = try await next.value
        #expect(body == HTTPImageLoaderTests.png && server.requestCount("/next") == 1)
        await server.stop()
    }
}

import Synchronization
import Testing
@testable import WebImage

/// The streams the library hands out: the producer ends the stream, the consumer's going away
/// cancels the producer, and a stream made in a cancelled task starts its producer cancelled.
struct ProducedStreamTests {
    @Test(.timeLimit(.minutes(1)))
    func theProducerEndsTheStreamWithItsResultOrItsError() async throws {
        let values = AsyncThrowingStream<Int, any Error>.produced { continuation in
            for value in 1...3 { continuation.yield(value) }
        }
        var seen: [Int] = []
        for try await value in values { seen.append(value) }
        #expect(seen == [1, 2, 3])
        struct Failure: Error, Equatable {}
        let failing = AsyncThrowingStream<Int, any Error>.produced { continuation in
            continuation.yield(1)
            throw Failure()
        }
        var iterator = failing.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        await #expect(throws: Failure.self) { _ = try await iterator.next() }
    }

    @Test(.timeLimit(.minutes(1)))
    func aStreamMadeInACancelledTaskStartsItsProducerCancelledBeforeAnyIteration() async throws {
        let sawCancelled = Mutex<Bool?>(nil)
        let maker = Task {
            while !Task.isCancelled { await Task.yield() }
            return AsyncThrowingStream<Int, any Error>.produced { _ in sawCancelled.withLock { $0 = Task.isCancelled } }
        }
        maker.cancel()
        let stream = await maker.value
        // Not iterated: only the creating task's cancellation can have reached the producer.
        try await waitUntil(sawCancelled.withLock { $0 } != nil)
        #expect(sawCancelled.withLock { $0 } == true)
        for try await _ in stream {}
    }

    @Test(.timeLimit(.minutes(1)))
    func droppingTheConsumerCancelsTheProducer() async throws {
        let ended = Mutex<Bool?>(nil)
        let consumer = Task {
            let stream = AsyncThrowingStream<Int, any Error>.produced { continuation in
                continuation.yield(0)
                do {
                    try await Task.sleep(for: .seconds(30))
                    ended.withLock { $0 = false }
                } catch {
                    ended.withLock { $0 = true }
                    throw error
                }
            }
            for try await _ in stream { break }
        }
        try await consumer.value
        try await waitUntil(ended.withLock { $0 } != nil)
        #expect(ended.withLock { $0 } == true, "the producer was cancelled, not left to sleep")
    }
}

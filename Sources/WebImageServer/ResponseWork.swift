import Synchronization

/// The requests being processed, by response key. A request whose key is in flight waits for
/// that work's answer instead of starting its own: equal paths (signature included) ask for the
/// same result, so one fetch, decode, transform and encode answers all of them, and only the
/// first takes a processing slot. The work runs in a task of its own, so a client that goes away
/// does not end it for the others.
final class ResponseWork: Sendable {
    private typealias Work = Task<Result<ProcessedImage, ProcessingRequestError>, Never>
    private let works = Mutex<[String: Work]>([:])
    /// How long a work may take in all.
    let timeout: Duration

    init(timeout: Duration) { self.timeout = timeout }

    /// The answer of the work in flight for `key`, or of a new one: `admit` is asked first (nil
    /// lets it start; an error is the answer), then `work` runs and its answer goes to every
    /// request that joined it meanwhile.
    func result(forKey key: String, admit: () -> ProcessingRequestError?,
                work: @escaping @Sendable () async -> Result<ProcessedImage, ProcessingRequestError>) async -> Result<ProcessedImage, ProcessingRequestError> {
        let decision = works.withLock { works -> Result<Work, ProcessingRequestError> in
            if let running = works[key] { return .success(running) }
            if let refusal = admit() { return .failure(refusal) }
            let timeout = self.timeout
            let started = Work {
                let result = await Self.within(timeout, work)
                self.finish(key)
                return result
            }
            works[key] = started
            return .success(started)
        }
        switch decision {
        case .success(let running): return await running.value
        case .failure(let refusal): return .failure(refusal)
        }
    }

    /// `work`'s answer, or a 504 once `timeout` passed: the work is then cancelled (the fetch,
    /// the wait for the budget, the transform and the encode stop at their next frame or row
    /// check) and its end awaited, so that no work outlives its answer. A work cancelled from
    /// outside (the server stopping) answers 503.
    static func within(_ timeout: Duration, _ work: @escaping @Sendable () async -> Result<ProcessedImage, ProcessingRequestError>)
        async -> Result<ProcessedImage, ProcessingRequestError> {
        await withTaskGroup(of: Result<ProcessedImage, ProcessingRequestError>?.self) { group in
            group.addTask { await work() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            if let first { return first }
            if Task.isCancelled { return .failure(ProcessingRequestError(503, "the request was cancelled")) }
            return .failure(ProcessingRequestError(504, "the request took longer than its time limit"))
        }
    }

    private func finish(_ key: String) {
        _ = works.withLock { $0.removeValue(forKey: key) }
    }

    /// Cancels every work in flight: each answers its requests with what cancellation gives
    /// (a 503).
    func cancelAll() {
        for work in works.withLock({ Array($0.values) }) { work.cancel() }
    }

    /// Works in flight.
    var count: Int { works.withLock { $0.count } }
}

/// A stream fed by a task of its own, the shape of every stream the library hands out
/// (`ImageManager.events(for:)`, the loaders' `load(_:)`): the producer ends the stream when it
/// returns or throws, and is cancelled when the consumer stops iterating or drops the stream.
extension AsyncThrowingStream where Failure == any Error, Element: Sendable {
    /// The stream `produce` feeds through its continuation. A stream made in a task already
    /// cancelled starts its producer cancelled: it asks nothing, even before it is first
    /// iterated (the consumer's cancellation would otherwise reach the producer only then).
    static func produced(by produce: @escaping @Sendable (Continuation) async throws -> Void) -> Self {
        let (stream, continuation) = makeStream()
        let cancelledAtCall = Task.isCancelled
        let task = Task {
            if cancelledAtCall { withUnsafeCurrentTask { $0?.cancel() } }
            do {
                try await produce(continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

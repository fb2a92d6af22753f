import Synchronization

/// A value another task computes, awaited by one task at a time: a waiter whose task is
/// cancelled leaves at once, and the value stays for a later wait (the task that takes a load
/// over from a cancelled caller waits for the same decode).
final class PendingValue<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiter: UnsafeContinuation<Value, any Error>?
    }
    private let state = Mutex(State())

    init() {}

    /// The value, or the error that took its place: the waiter, if any, is resumed with it.
    func fulfil(_ result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> UnsafeContinuation<Value, any Error>? in
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    /// Waits for the value; throws `CancellationError` when this task is cancelled first.
    func value() async throws -> Value {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (waiter: UnsafeContinuation<Value, any Error>) in
                // Under the lock: a cancellation handler that ran before finds no waiter, and its
                // task's flag is already set.
                let ready = state.withLock { state -> Result<Value, any Error>? in
                    if let result = state.result { return result }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiter = waiter
                    return nil
                }
                if let ready { waiter.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> UnsafeContinuation<Value, any Error>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

/// The library's own coders and transformers: their work is bounded by the image (no waiting
/// on I/O, locks or time), so the caller that runs a load in its own task may run it there.
protocol BoundedWork {}

extension ICOCoder: BoundedWork {}
extension BMPCoder: BoundedWork {}
extension PNGCoder: BoundedWork {}
extension JPEGCoder: BoundedWork {}
extension WebPCoder: BoundedWork {}
extension GIFCoder: BoundedWork {}
extension CroppingTransformer: BoundedWork {}
extension GrayscaleTransformer: BoundedWork {}
extension RoundCornerTransformer: BoundedWork {}
extension TintTransformer: BoundedWork {}
extension BlurTransformer: BoundedWork {}
extension RotationTransformer: BoundedWork {}
extension FlippingTransformer: BoundedWork {}
extension ResizingTransformer: BoundedWork {}

#if WEBIMAGE_TSAN
import Glibc

/// In ThreadSanitizer builds only (`-Xswiftc -DWEBIMAGE_TSAN`, as `scripts/sanitize.sh thread`
/// builds): a lock with `Synchronization.Mutex`'s API on a `pthread_mutex_t`, which every module
/// of the package uses in place of `Mutex` (see the `typealias` below and its twins in the
/// `webimage` and test targets).
///
/// Why: `Mutex` takes its lock with a futex inside the standard library, which is not built with
/// TSan's instrumentation, so TSan sees the accesses the lock guards but not the lock, and
/// reports races between them that cannot happen. TSan intercepts `pthread_mutex_lock`, so with
/// this lock the same run reports only what is really unordered. It exists in those builds only.
public final class SanitizerMutex<Value>: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A lock guarding `initialValue`.
    public init(_ initialValue: sending Value) {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
        value = initialValue
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }
}

typealias Mutex = SanitizerMutex
#endif

import Foundation

/// The least any cache that keeps blocking file I/O off Swift's cooperative pool can pay: a
/// plain thread waiting on a condition variable runs each job, and the awaiting task resumes on
/// the pool. No library code; the benchmarks' "no-library floor" for one awaited disk operation.
// @unchecked Sendable: `jobs` is only touched with `condition` locked.
public final class FloorThreadExecutor: SerialExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    /// Starts the thread.
    public init() {
        let thread = Thread { [self] in
            Thread.current.name = "floor-io"
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let batch = jobs
                jobs.removeAll(keepingCapacity: true)
                condition.unlock()
                for job in batch { job.runSynchronously(on: asUnownedSerialExecutor()) }
            }
        }
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }
}

/// Plain POSIX file operations run on a `FloorThreadExecutor`'s thread.
public actor FloorIO {
    private let executor = FloorThreadExecutor()
    /// This actor runs on its own thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// An I/O actor with its own thread.
    public init() {}

    /// The whole file at `path` (open, fstat, read), or nil.
    public func read(_ path: String) -> Data? { readFile(path) }

    /// `data` written to a temporary file (O_EXCL) in `directory`, then renamed to `name`.
    public func writeThenRename(_ data: Data, directory: String, name: String) {
        writeRenameFile(data, directory: directory, name: name)
    }
}

/// The whole file at `path` with open, fstat and read, or nil.
public func readFile(_ path: String) -> Data? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { return nil }
    var data = Data(count: Int(info.st_size))
    let count = data.count
    let read = data.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, count) }
    return read == count ? data : nil
}

/// `data` written to a temporary file (O_EXCL) in `directory`, then renamed to `name`.
public func writeRenameFile(_ data: Data, directory: String, name: String) {
    let temporary = directory + "/." + name + ".tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    rename(temporary, directory + "/" + name)
}

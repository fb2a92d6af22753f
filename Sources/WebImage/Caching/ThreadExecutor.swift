import Foundation

/// A serial executor that runs its jobs on one dedicated thread, so that blocking file I/O
/// never occupies a thread of Swift's cooperative pool.
// @unchecked Sendable: `jobs` and `stopped` are only touched with `condition` locked; the
// thread is started once in init.
final class ThreadExecutor: SerialExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    private let name: String

    /// Starts the thread, named `name` (visible in debuggers and `top -H`).
    init(name: String) {
        self.name = name
        let thread = Thread { [self] in run() }
        thread.start()
    }

    /// The name of the `ThreadExecutor` whose thread is running this code, or nil on any
    /// other thread (the cooperative pool included).
    static var currentName: String? { Thread.current.threadDictionary[markerKey] as? String }
    private static let markerKey = "com.webimage.executor"

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread finish the jobs already queued and exit.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        Thread.current.name = name
        Thread.current.threadDictionary[ThreadExecutor.markerKey] = name
        var batch: [UnownedJob] = []
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty && stopped { condition.unlock(); return }
            swap(&batch, &jobs)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedSerialExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

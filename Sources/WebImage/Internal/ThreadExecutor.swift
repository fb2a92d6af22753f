import CWebImageSystem
import Foundation
import Synchronization

/// A serial executor that runs its jobs on one dedicated thread, so that blocking file I/O
/// never occupies a thread of Swift's cooperative pool.
// @unchecked Sendable: `jobs` and `stopped` are only touched with `condition` locked; the
// thread is started once in init.
package final class ThreadExecutor: SerialExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false
    /// Jobs queued and not yet taken, readable without the lock (for the spin before sleeping).
    private let pending = Atomic<Int>(0)

    private let name: String

    /// Starts the thread, named `name` (visible in debuggers and `top -H`).
    package init(name: String) {
        self.name = name
        let thread = Thread { [self] in run() }
        thread.start()
    }

    /// The name of the `ThreadExecutor` whose thread is running this code, or nil on any
    /// other thread (the cooperative pool included).
    static var currentName: String? { Thread.current.threadDictionary[markerKey] as? String }
    private static let markerKey = "com.webimage.executor"

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        pending.add(1, ordering: .releasing)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread finish the jobs already queued and exit.
    package func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    /// The name the system shows (`top -H`, `perf`, `/proc/PID/task/TID/comm`): Linux keeps at most
    /// 15 bytes and refuses a longer name outright, which left the thread with its parent's
    /// name; so `webimage.` becomes `wi.` and the rest is cut to fit.
    static func systemName(_ name: String) -> String {
        let short = name.hasPrefix("webimage.") ? "wi." + name.dropFirst("webimage.".count) : Substring(name)
        var bytes = Array(short.utf8.prefix(15))
        // Never cut a character in two.
        while !bytes.isEmpty, String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// How long the thread looks for more work before sleeping, when work is frequent.
    private static let spinWindow = Duration.microseconds(250)

    private func run() {
        var lastJobArrival = ContinuousClock.now - .seconds(1)
        var arrivalGap = Duration.seconds(1)
        Thread.current.name = name
        _ = wi_thread_set_name(ThreadExecutor.systemName(name))
        Thread.current.threadDictionary[ThreadExecutor.markerKey] = name
        var batch: [UnownedJob] = []
        while true {
            // Adaptive spinning: while jobs arrive less than `spinWindow` apart (a busy cache), look
            // for the next one before sleeping, which saves a futex wake-up per round trip; after
            // an idle gap the thread sleeps at once and costs no CPU.
            if arrivalGap < ThreadExecutor.spinWindow * 2 {
                let spinUntil = ContinuousClock.now + ThreadExecutor.spinWindow
                // Yield while spinning, so that runnable threads (a decode on the pool) keep the core.
                while pending.load(ordering: .acquiring) == 0 && ContinuousClock.now < spinUntil { sched_yield() }
            }
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty && stopped { condition.unlock(); return }
            swap(&batch, &jobs)
            pending.subtract(batch.count, ordering: .relaxed)
            condition.unlock()
            let arrival = ContinuousClock.now
            arrivalGap = arrival - lastJobArrival
            lastJobArrival = arrival
            for job in batch { job.runSynchronously(on: asUnownedSerialExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

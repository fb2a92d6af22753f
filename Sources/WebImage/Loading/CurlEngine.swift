import CCurl
import CWebImageSystem
import Foundation
import Synchronization

/// One libcurl multi handle driven from one dedicated thread: every transfer of a loader runs
/// here (no thread per transfer, no `curl_easy_perform`). Other threads hand it work through a
/// locked queue and `curl_multi_wakeup`.
// @unchecked Sendable: `queues`, `cancellations` and `stopped` are only touched under `lock`;
// `multi`, `share` and `running` belong to the engine thread after init.
final class CurlEngine: @unchecked Sendable {
    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    private let lock = NSLock()
    /// Waiting transfers, one queue per priority (low, normal, high).
    private var queues = PriorityQueues<CurlTransfer>()
    /// The configuration's headers as one libcurl list, shared by every transfer that adds none.
    private let defaultHeaders: UnsafeMutablePointer<curl_slist>?
    private var cancellations: Set<Int> = []
    private var stopped = false
    private let multi: UnsafeMutableRawPointer
    private let share: UnsafeMutableRawPointer?
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Easy handles of finished transfers, reset, for the next ones (at most `concurrency`;
    /// always empty where `reusesHandles` is false).
    private var idleHandles: [UnsafeMutableRawPointer] = []
    /// Whether a wake-up is on its way to the thread: other callers then skip the system call
    /// (the thread clears it before it looks at the queue and the cancellations).
    private let wakePending = Atomic<Bool>(false)
    private let nextID = Atomic<Int>(0)
    private let live = Atomic<Int>(0)
    private let keptHandles = Atomic<Int>(0)
    private let suspended = Atomic<Bool>(false)
    let configuration: HTTPImageLoader.Configuration
    /// Partial bodies kept to be resumed (`Configuration.resumableDataLimit`); nil: none.
    let resumable: ResumableDataStore?

    /// Whether queued transfers wait (running ones go on); setting it false starts them again.
    var isSuspended: Bool {
        get { suspended.load(ordering: .acquiring) }
        set {
            suspended.store(newValue, ordering: .releasing)
            if !newValue { wakeUp() }
        }
    }

    /// Easy handles kept for the next transfers (tests read it; see `reusesHandles`).
    var keptHandleCount: Int { keptHandles.load(ordering: .relaxed) }

    /// Transfers queued or running (tests check it returns to zero). A transfer is counted out
    /// before its consumer is resumed, so a caller whose load ended never still sees it.
    var liveTransfers: Int { live.load(ordering: .relaxed) }

    /// Transfers running at once: the configured number, but at most a quarter of the process's
    /// open-file limit (each holds a socket, and so may each idle connection libcurl keeps), so
    /// that a high setting queues transfers instead of failing them with "too many open files".
    let concurrency: Int

    /// Whether a finished transfer's easy handle is kept for the next one: only with libcurl
    /// 8.1.0 or later. Before it, a handle kept a pointer to the last header of its previous
    /// response, freed when the next transfer starts (curl/curl#11101, fixed in 8.1.0); a response
    /// whose first header line began with white space and held a colon (an obsolete fold with
    /// nothing to fold onto) made libcurl read and reallocate that freed header: the process
    /// aborted on a double free. Debian 12's 7.88.1 has the bug (found by `scripts/fuzz.sh http`
    /// under AddressSanitizer; `CurlHandleReuseTests`).
    static let reusesHandles = wi_curl_version_number() >= 0x08_01_00

    /// A quarter of the soft limit on open files (RLIMIT_NOFILE), at least 1.
    static func socketBudget() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(Int.max) else { return Int.max }
        return max(1, Int(limit.rlim_cur / 4))
    }

    init(configuration: HTTPImageLoader.Configuration) {
        _ = CurlEngine.globalInit
        self.configuration = configuration
        resumable = configuration.resumableDataLimit > 0 ? ResumableDataStore(limit: configuration.resumableDataLimit) : nil
        concurrency = max(1, min(configuration.maximumConcurrentDownloads, CurlEngine.socketBudget()))
        defaultHeaders = CurlTransfer.headerList(configuration.headers)
        guard let handle = curl_multi_init() else { fatalError("libcurl could not create a multi handle (out of memory)") }
        multi = handle
        share = curl_share_init()
        if let share { _ = wi_curl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue)) }
        _ = wi_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, concurrency)
        // Idle connections kept for reuse hold sockets too: no more of them than transfers.
        _ = wi_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, concurrency)
        let thread = Thread { [self] in
            // Named from the thread itself: a name given to `Thread` before it starts reached
            // Foundation's object only, and the system showed the parent's name (top -H, perf).
            Thread.current.name = "webimage.http"
            _ = wi_thread_set_name("webimage.http")
            run()
        }
        thread.start()
    }

    /// Wakes the thread from its poll (a held transfer may start). One write to libcurl's wake-up
    /// socket per sleep: callers that find a wake-up already on its way skip theirs.
    func wakeUp() {
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) { curl_multi_wakeup(multi) }
    }

    /// Stops the thread once the queue is empty (the loader went away).
    func stop() {
        suspended.store(false, ordering: .releasing)   // the queue drains before the thread ends
        lock.withLock { stopped = true }
        wakeUp()
    }

    /// Queues a transfer for `request`; its events go to the returned stream.
    func start(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        return AsyncThrowingStream { continuation in
            continuation.onTermination = { [weak self] termination in
                if case .cancelled = termination { self?.cancel(id) }
            }
            enqueue(CurlTransfer(id: id, request: request, configuration: configuration, sink: .stream(continuation),
                                 resumable: resumable))
        }
    }

    /// Loads the whole body, resuming the caller once at the end.
    /// A call cancelled before its transfer is queued sends nothing: the gate orders "queued"
    /// and "cancelled" (the cancellation handler can run before the operation when the task
    /// was cancelled already, and then no transfer with this id exists yet to abort). Lock
    /// order: the gate, then the engine's lock.
    func wholeBody(_ request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let gate = Mutex((queued: false, cancelled: false))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let transfer = CurlTransfer(id: id, request: request, configuration: configuration, sink: .whole(continuation),
                                           resumable: resumable)
                let queued = gate.withLock { state -> Bool in
                    guard !state.cancelled else { return false }
                    state.queued = true
                    enqueue(transfer)
                    return true
                }
                if !queued { transfer.fail(CancellationError()) }
            }
        } onCancel: {
            let queued = gate.withLock { state -> Bool in
                state.cancelled = true
                return state.queued
            }
            if queued { cancel(id) }
        }
    }

    private func enqueue(_ transfer: CurlTransfer) {
        live.add(1, ordering: .relaxed)
        let handle = transfer.request.priorityHandle
        if let handle {
            // A waiting transfer moves to the back of its new level; a running one is unaffected.
            // Watched before it is queued: a change in between is then read by the append.
            let id = transfer.id
            handle.observe { [weak self] handle in self?.reprioritize(id, to: handle) }
        }
        lock.withLock { queues.append(transfer, level: (handle?.value ?? transfer.request.priority).rawValue) }
        wakeUp()
    }

    /// Moves a waiting transfer to the queue of its handle's current value (read under the
    /// lock, so that racing changes end at the last one).
    private func reprioritize(_ id: Int, to handle: LoadPriority) {
        lock.withLock { queues.move(id: id, toLevel: handle.value.rawValue) }
    }

    private func cancel(_ id: Int) {
        lock.withLock { _ = cancellations.insert(id) }
        wakeUp()
    }

    private func run() {
        while true {
            // Cleared before the queue and the cancellations are read (under the lock): work added
            // after this finds it clear and writes a wake-up, so none is missed.
            wakePending.store(false, ordering: .releasing)
            let (cancelled, isStopped) = lock.withLock { () -> (Set<Int>, Bool) in
                let taken = cancellations
                cancellations = []
                return (taken, stopped)
            }
            for id in cancelled { abort(id) }
            startQueued()
            if isStopped && running.isEmpty && lock.withLock({ queues.isEmpty }) { break }
            var stillRunning: Int32 = 0
            curl_multi_perform(multi, &stillRunning)
            var left: Int32 = 0
            var completed = false
            while let message = curl_multi_info_read(multi, &left) {
                var easy: UnsafeMutableRawPointer?
                var result = CURLE_OK
                guard wi_curl_message_done(message, &easy, &result) != 0, let easy, let transfer = running.removeValue(forKey: easy) else { continue }
                curl_multi_remove_handle(multi, easy)
                live.subtract(1, ordering: .relaxed)
                transfer.complete(result)
                recycle(transfer)
                completed = true
            }
            // A finished transfer frees a slot: start the queue again before sleeping.
            if completed && lock.withLock({ !queues.isEmpty }) { continue }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        for easy in idleHandles { curl_easy_cleanup(easy) }
        idleHandles = []
        curl_multi_cleanup(multi)
        if let share { curl_share_cleanup(share) }
        curl_slist_free_all(defaultHeaders)
    }

    /// Starts queued transfers while fewer than the maximum run, by priority, then FIFO or LIFO.
    private func startQueued() {
        while running.count < concurrency, !suspended.load(ordering: .acquiring) {
            let lifo = configuration.executionOrder == .lifo
            // The next transfer stays queued while its manager's decode backlog is full; the
            // backlog wakes this thread when there is room (see BacklogGate).
            var held: BacklogGate?
            let next = lock.withLock { () -> CurlTransfer? in
                guard let head = queues.peek(lifo: lifo) else { return nil }
                if let gate = head.request.backlog, !gate.hasRoom {
                    held = gate
                    return nil
                }
                return queues.next(lifo: lifo)
            }
            if let held {
                held.onRoom(ObjectIdentifier(self)) { [weak self] in self?.wakeUp() }
                if !held.hasRoom { return }   // room came back in between: go on
                continue
            }
            guard let transfer = next else { return }
            let reused = idleHandles.popLast()
            keptHandles.store(idleHandles.count, ordering: .relaxed)
            guard transfer.makeHandle(share: share, defaultHeaders: defaultHeaders, reusing: reused),
                  let easy = transfer.easy else {
                live.subtract(1, ordering: .relaxed)
                transfer.fail(transfer.setupFailure ?? ImageError.network(url: transfer.request.url, reason: "libcurl could not create a transfer"))
                continue
            }
            running[easy] = transfer
            curl_multi_add_handle(multi, easy)
        }
    }

    /// Keeps a finished transfer's easy handle for the next one (it left the multi handle), or
    /// frees it here, on the engine's thread (where `reusesHandles` is false, or enough are kept).
    private func recycle(_ transfer: CurlTransfer) {
        guard let easy = transfer.releaseHandle(forReuse: CurlEngine.reusesHandles && idleHandles.count < concurrency) else { return }
        idleHandles.append(easy)
        keptHandles.store(idleHandles.count, ordering: .relaxed)
    }

    /// Removes a transfer whose consumer went away: the connection closes at once.
    private func abort(_ id: Int) {
        if let (easy, transfer) = running.first(where: { $0.value.id == id }) {
            running.removeValue(forKey: easy)
            curl_multi_remove_handle(multi, easy)
            live.subtract(1, ordering: .relaxed)
            transfer.fail(CancellationError())
            recycle(transfer)
            return
        }
        let removed: CurlTransfer? = lock.withLock { queues.remove(id: id) }
        if let removed {
            live.subtract(1, ordering: .relaxed)
            removed.fail(CancellationError())
        }
    }
}

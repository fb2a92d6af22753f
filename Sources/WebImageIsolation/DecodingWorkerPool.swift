import CWebImageIsolation
import Foundation
import Synchronization
import WebImage

/// Decodes in a pool of sandboxed worker processes, so that a decoder that crashes, never
/// returns or takes gigabytes on a stranger's bytes ends one worker and fails one call.
///
/// Each worker is this program started again (`DecodingWorker.runIfRequested(coders:)` in its
/// `main` makes it a worker), locked down once its libraries are loaded: no files, no network,
/// no new processes (seccomp), no new privileges, killed with its parent, within an address-space
/// limit; each decode has a CPU-time and a wall-clock limit. The data goes to a worker and the
/// pixels come back through shared memory; the pool checks every size and count a worker sends.
/// A crash, a limit or a time-out fails that call with a typed error and a fresh worker takes
/// the place of the one that ended; a cancelled call kills its decode at once.
///
/// ```swift
/// let pool = DecodingWorkerPool()
/// let coders = ImageCoders(ImageCoders.shared.all, isolation: pool)
/// let manager = ImageManager(cache: ImageCache(namespace: "uploads", coders: coders), coders: coders)
/// ```
// @unchecked Sendable: `queue`, `stopped` and each job's state are only touched with
// `condition` locked; the threads are started once in init.
public final class DecodingWorkerPool: ImageDecodingIsolation, @unchecked Sendable {
    /// The pool's size and each decode's limits.
    public struct Configuration: Sendable {
        /// How many workers decode at once (one per core by default).
        public var workerCount = max(1, ProcessInfo.processInfo.activeProcessorCount)
        /// The memory a worker may take for one decode beyond what it maps at start-up, in
        /// bytes (1 GiB by default): its address-space limit.
        public var memoryLimit = 1 << 30
        /// The CPU time one decode may use (10 s by default).
        public var cpuTimeLimit = Duration.seconds(10)
        /// The wall-clock time one decode may take once a worker has it (10 s by default);
        /// past it the worker is killed and the call fails with `ImageError.decodeTimedOut`.
        public var timeLimit = Duration.seconds(10)
        /// The largest result a worker may hand back, every frame counted, in bytes (the
        /// memory limit by default).
        public var maximumResultBytes: Int?
        /// The program started as a worker: this one by default (`/proc/self/exe`), whose `main`
        /// calls `DecodingWorker.runIfRequested(coders:)`.
        public var executable = "/proc/self/exe"
        /// Arguments given to each worker (none by default).
        public var arguments: [String] = []
        /// Variables set in each worker's environment, over this process's (none by default).
        public var environment: [String: String] = [:]
        /// How long a worker may take to start and say it is ready (30 s by default).
        public var startTimeout = Duration.seconds(30)

        /// The defaults.
        public init() {}
    }

    /// The configuration the pool runs with.
    public let configuration: Configuration
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopped = false
    private var started = false
    private let restarts = Mutex<Int>(0)
    /// Each thread's worker process, by thread.
    private let processes = Mutex<[Int: pid_t]>([:])

    /// A pool of `configuration.workerCount` workers, each on a thread of its own that hands it
    /// decodes, started with the first decode; a worker that cannot be started fails the decodes
    /// given to it. Call `shutdown()` when done: the threads and workers stay until then.
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Starts the threads, once (called with `condition` locked).
    private func startThreads() {
        guard !started else { return }
        started = true
        for index in 0..<max(1, configuration.workerCount) {
            let thread = Thread { [self] in serve(index) }
            thread.name = "webimage.decoder.\(index)"
            thread.start()
        }
    }

    /// How many workers were started in place of one that ended (a crash, a limit, a time-out,
    /// a cancelled decode).
    public var restartCount: Int { restarts.withLock { $0 } }

    /// The process IDs of the workers running now.
    public var workerProcessIDs: [Int32] { processes.withLock { Array($0.values) } }

    /// Stops the pool: decodes queued fail with `CancellationError`, each worker exits once its
    /// decode in progress ends, and the threads end.
    public func shutdown() {
        condition.lock()
        stopped = true
        let waiting = queue
        queue = []
        condition.broadcast()
        condition.unlock()
        for job in waiting { job.continuation?.resume(throwing: CancellationError()) }
    }

    /// Decodes `data` in a worker: see `ImageDecodingIsolation.decode(_:options:)`.
    public func decode(_ data: Data, options: ImageDecodingOptions) async throws -> Image {
        let job = Job(data: data, options: options)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                condition.lock()
                guard !stopped, !job.cancelled else {
                    condition.unlock()
                    continuation.resume(throwing: CancellationError())
                    return
                }
                job.continuation = continuation
                startThreads()
                queue.append(job)
                condition.signal()
                condition.unlock()
            }
        } onCancel: {
            cancel(job)
        }
        // The outcome was made on the pool's thread and left under the lock: read under it too,
        // so that the handover is ordered by the lock (which ThreadSanitizer sees), not by the
        // continuation alone.
        guard let outcome = takeOutcome(job) else { throw CancellationError() }
        return try outcome.get()
    }

    private func cancel(_ job: Job) {
        condition.lock()
        job.cancelled = true
        if let index = queue.firstIndex(where: { $0 === job }) {
            queue.remove(at: index)
            condition.unlock()
            job.continuation?.resume(throwing: CancellationError())
            return
        }
        // Running: its worker is killed now; its thread sees the end and answers the call.
        if let pid = job.worker { kill(pid, SIGKILL) }
        condition.unlock()
    }

    /// One decode waiting for, or running on, a worker.
    // @unchecked Sendable: its mutable fields are only touched with the pool's `condition`
    // locked (the continuation is resumed once, by whoever took the job off the queue).
    private final class Job: @unchecked Sendable {
        let data: Data
        let options: ImageDecodingOptions
        var continuation: CheckedContinuation<Void, any Error>?
        /// The decode's outcome, set by the pool's thread before it resumes the call.
        var outcome: Result<Image, any Error>?
        var cancelled = false
        /// The worker running it.
        var worker: pid_t?

        init(data: Data, options: ImageDecodingOptions) {
            self.data = data
            self.options = options
        }
    }

    /// A thread's life: start a worker, then give it one queued decode after another, starting
    /// a fresh one whenever it ends.
    private func serve(_ index: Int) {
        var worker: WorkerProcess?
        var startFailure = WorkerProcess.failure("not started")
        func startIfNeeded() {
            guard worker == nil else { return }
            do { worker = try startWorker(index) } catch { startFailure = error }
        }
        startIfNeeded()
        while true {
            condition.lock()
            while queue.isEmpty && !stopped { condition.wait() }
            guard !stopped else {
                condition.unlock()
                processes.withLock { $0[index] = nil }
                return
            }
            let job = queue.removeFirst()
            condition.unlock()
            if let running = worker, !running.isRunning { worker = nil }
            startIfNeeded()
            guard let running = worker else {
                finish(job, with: .failure(startFailure))
                continue
            }
            // From here a cancellation kills this worker; one that came before skips the decode.
            condition.lock()
            job.worker = running.pid
            let cancelledBefore = job.cancelled
            condition.unlock()
            let outcome = cancelledBefore ? .failure(CancellationError()) : run(job, on: running)
            condition.lock()
            job.worker = nil
            let cancelled = job.cancelled
            condition.unlock()
            if !running.isRunning || (cancelled && !cancelledBefore) {
                worker = nil
                restarts.withLock { $0 += 1 }
            }
            finish(job, with: cancelled ? .failure(CancellationError()) : outcome)
            // A fresh worker takes the place of one that ended before the next decode comes.
            startIfNeeded()
        }
    }

    /// The outcome the pool's thread left for `job`'s call, read under the lock.
    private func takeOutcome(_ job: Job) -> Result<Image, any Error>? {
        condition.lock()
        defer { condition.unlock() }
        return job.outcome
    }

    /// Leaves `outcome` for the call under the lock, then resumes it.
    private func finish(_ job: Job, with outcome: Result<Image, any Error>) {
        condition.lock()
        job.outcome = outcome
        condition.unlock()
        job.continuation?.resume()
    }

    private func startWorker(_ index: Int) throws(ImageError) -> WorkerProcess {
        processes.withLock { $0[index] = nil }
        // A process started as a worker whose main did not become one starts no workers of its own.
        guard ProcessInfo.processInfo.environment[DecodingWorker.environmentKey] == nil else {
            throw WorkerProcess.failure("this process is a decoding worker whose main did not call DecodingWorker.runIfRequested()")
        }
        let worker = try WorkerProcess(executable: configuration.executable, arguments: configuration.arguments,
                                       environment: configuration.environment, memoryLimit: configuration.memoryLimit,
                                       startTimeout: configuration.startTimeout)
        processes.withLock { $0[index] = worker.pid }
        return worker
    }

    /// One decode on `worker`, with the pool's limits; the worker is ended on any failure that
    /// is not the decoder's own answer.
    private func run(_ job: Job, on worker: WorkerProcess) -> Result<Image, any Error> {
        let cpu = UInt32(clamping: max(1, configuration.cpuTimeLimit.components.seconds))
        let request = WorkerRequest(options: job.options, cpuSeconds: cpu, dataLength: job.data.count)
        let format = ImageFormat(sniffing: job.data)
        do {
            let (reply, fd) = try worker.decode(job.data, request: request, timeLimit: configuration.timeLimit)
            switch reply {
            case .failed(let error):
                return .failure(error)
            case .decoded(let header):
                defer { close(fd) }
                guard let image = Self.image(header, in: fd, scale: job.options.scale,
                                             maximumBytes: configuration.maximumResultBytes ?? configuration.memoryLimit) else {
                    _ = worker.end(.malformed)
                    return .failure(ImageError.undecodable(format, reason: "the decoding worker's reply did not match its pixels"))
                }
                return .success(image)
            }
        } catch {
            switch error {
            case .timedOut:
                return .failure(ImageError.decodeTimedOut(seconds: Double(configuration.timeLimit.components.seconds)
                                                          + Double(configuration.timeLimit.components.attoseconds) / 1e18))
            case .malformed:
                return .failure(ImageError.undecodable(format, reason: "the decoding worker sent a malformed reply"))
            case .died(let signal, let exitStatus):
                let how = signal == SIGXCPU ? "went over its CPU time limit"
                    : signal != 0 ? "was ended by signal \(signal) (a crash, or its memory limit)" : "exited (status \(exitStatus))"
                return .failure(ImageError.undecodable(format, reason: "the decoder \(how)"))
            }
        }
    }

    /// A worker's reply read as the pool reads it: `message` as the reply's message and `file`
    /// as the contents of its attached file (put in a shared-memory file first). The image, the
    /// decoder's error, or nil when the reply is malformed. For the protocol's fuzz target.
    @_spi(Fuzzing) public static func reading(message: some Collection<UInt8>, file: some Collection<UInt8>) -> Result<Image, ImageError>? {
        _ = WorkerRequest(parsing: message)   // the worker's side of the protocol reads the same bytes
        switch WorkerReply(parsing: message) {
        case nil: return nil
        case .failed(let error)?: return .failure(error)
        case .decoded(let header)?:
            let fd = wi_isolation_memfd("webimage-fuzz", UInt64(file.count))
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            let bytes = Array(file)
            guard bytes.withUnsafeBytes({ pwrite(fd, $0.baseAddress, $0.count, 0) }) == bytes.count, wi_isolation_seal_size(fd) == 0
            else { return nil }
            return image(header, in: fd, scale: 1, maximumBytes: 64 << 20).map { .success($0) }
        }
    }

    /// The image a worker described, its pixels in the file `fd`; nil when the file does not
    /// hold exactly what the header says, holds more than `maximumBytes` of pixels, or its size
    /// is not sealed (a worker that kept the file could shrink it under the mapping). A still
    /// image keeps the mapping as its pixels; an animation's frames are copied out of it.
    static func image(_ header: WorkerReply.Header, in fd: Int32, scale: Double, maximumBytes: Int) -> Image? {
        // Each factor is bounded by the parser (2^20, 2^20, 100,000): no product overflows.
        let size = header.fileBytes
        guard header.pixelBytes <= maximumBytes, wi_isolation_size_is_sealed(fd) != 0, wi_isolation_file_size(fd) == Int64(size),
              let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0), mapped != MAP_FAILED else { return nil }
        let bytes = UnsafeRawBufferPointer(start: mapped, count: size)
        guard let decoded = header.decoded(tail: bytes[header.pixelBytes...]) else {
            munmap(mapped, size)
            return nil
        }
        let format: PixelFormat = header.deep ? .rgba16 : .rgba8
        let frameBytes = header.width * header.height * format.bytesPerPixel
        let frames: [ImageFrame]
        if decoded.durations.count == 1 {
            frames = [ImageFrame(bitmap: Bitmap(width: header.width, height: header.height, adoptingMapping: mapped, mappedLength: size,
                                                isPremultiplied: header.premultiplied, pixelFormat: format), duration: decoded.durations[0])]
        } else {
            frames = decoded.durations.enumerated().map { index, duration in
                ImageFrame(bitmap: Bitmap(width: header.width, height: header.height, copyingBytesAt: mapped + index * frameBytes,
                                          isPremultiplied: header.premultiplied, pixelFormat: format), duration: duration)
            }
            munmap(mapped, size)
        }
        var image = Image(firstFrame: frames[0], frames: .preloaded(frames), format: header.format,
                          loopCount: frames.count > 1 ? header.loopCount : nil, scale: scale,
                          exifOrientation: header.exifOrientation, orientationApplied: header.orientationApplied)
        image.colorInfo = decoded.colorInfo
        return image
    }
}

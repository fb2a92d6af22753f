import CWebImageIsolation
import Foundation
import WebImage

/// One worker process and the parent's end of its socket. Used by one pool thread at a time.
final class WorkerProcess {
    let pid: pid_t
    private let socket: Int32
    private var ended = false
    private var buffer = [UInt8](repeating: 0, count: WorkerReply.maximumMessageBytes)
    /// The shared-memory file each decode's data is written to, kept from one decode to the
    /// next (its pages are reused), and the read-only descriptor of it the worker is sent: a
    /// worker cannot write to it or change its size.
    private var input: (file: Int32, readOnly: Int32, capacity: Int)?
    /// The most bytes of data the input file keeps between decodes; a larger one is shrunk after.
    private static let keptInputBytes = 8 << 20

    /// Starts `executable` as a worker with `memoryLimit` bytes for its decodes.
    init(executable: String, arguments: [String], environment extra: [String: String], memoryLimit: Int,
         startTimeout: Duration) throws(ImageError) {
        var pair: [Int32] = [-1, -1]
        let status = pair.withUnsafeMutableBufferPointer { wi_isolation_socketpair($0.baseAddress) }
        guard status == 0 else { throw Self.failure("no socket pair (errno \(status))") }
        var environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        environment[DecodingWorker.environmentKey] = String(memoryLimit)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = wi_isolation_spawn(executable, argv, envp, pair[1], &pid)
        close(pair[1])
        guard spawned == 0 else {
            close(pair[0])
            throw Self.failure("\(executable) could not be started (errno \(spawned))")
        }
        self.pid = pid
        socket = pair[0]
        // Ready once its libraries are loaded and it is locked down; a program whose `main`
        // does not call `DecodingWorker.runIfRequested` never says so.
        var length = 0, fd: Int32 = -1
        let milliseconds = Int32(clamping: startTimeout.components.seconds * 1000)
        let received = buffer.withUnsafeMutableBytes { wi_isolation_receive(socket, $0.baseAddress, $0.count, &length, &fd, milliseconds) }
        if fd >= 0 { close(fd) }
        guard received == 0, length > 0, Array(buffer[..<length]) == ByteWriter.ready else {
            _ = end(.malformed)
            throw Self.failure("\(executable) did not start as a decoding worker (its main must call DecodingWorker.runIfRequested())")
        }
    }

    deinit {
        if let input {
            close(input.file)
            close(input.readOnly)
        }
        close(socket)   // a worker that is still there reads the end of its stream and exits
        if !ended { var exitStatus: Int32 = 0; _ = wi_isolation_kill_and_reap(pid, &exitStatus) }
    }

    static func failure(_ reason: String) -> ImageError {
        .undecodable(.unknown, reason: "no decoding worker: \(reason)")
    }

    /// How a decode on this worker ended, short of a reply.
    enum Ending: Error {
        /// No reply within the time limit: the worker was killed.
        case timedOut
        /// The worker is gone (a crash, a limit, a kill): the signal that ended it, or 0.
        case died(signal: Int32, exitStatus: Int32)
        /// The worker sent what is not a reply: it was killed.
        case malformed
    }

    /// Sends `data` with `request`, waits at most `timeLimit` for the reply and returns it with
    /// its attached pixel file (owned by the caller; -1 with an error reply).
    func decode(_ data: Data, request: WorkerRequest, timeLimit: Duration) throws(Ending) -> (WorkerReply, Int32) {
        guard let input = inputFile(holding: data) else { throw end(.malformed) }
        let message = request.bytes
        let sent = message.withUnsafeBytes { wi_isolation_send(socket, $0.baseAddress, $0.count, input) }
        guard sent == 0 else { throw end(.died(signal: 0, exitStatus: 0)) }
        var length = 0, fd: Int32 = -1
        let milliseconds = Int32(clamping: timeLimit.components.seconds * 1000 + timeLimit.components.attoseconds / 1_000_000_000_000_000)
        let status = buffer.withUnsafeMutableBytes { wi_isolation_receive(socket, $0.baseAddress, $0.count, &length, &fd, max(1, milliseconds)) }
        if status == ETIMEDOUT { throw end(.timedOut) }
        guard status == 0, length > 0 else { throw end(.died(signal: 0, exitStatus: 0)) }
        guard let reply = WorkerReply(parsing: buffer[..<length]) else {
            if fd >= 0 { close(fd) }
            throw end(.malformed)
        }
        switch reply {
        case .decoded where fd < 0, .failed where fd >= 0:
            if fd >= 0 { close(fd) }
            throw end(.malformed)
        default:
            return (reply, fd)
        }
    }

    /// The read-only descriptor of the input file, holding `data` at its start; nil when the
    /// file cannot be made or written.
    private func inputFile(holding data: Data) -> Int32? {
        if let current = input, current.capacity < data.count || (current.capacity > Self.keptInputBytes && data.count <= Self.keptInputBytes) {
            // Grown to hold this data, or shrunk back after a large one.
            let capacity = max(data.count, min(current.capacity, Self.keptInputBytes))
            guard ftruncate(current.file, off_t(capacity)) == 0 else { return nil }
            input?.capacity = capacity
        }
        if input == nil {
            let file = wi_isolation_memfd("webimage-data", UInt64(data.count))
            guard file >= 0 else { return nil }
            let readOnly = open("/proc/self/fd/\(file)", O_RDONLY | O_CLOEXEC)
            guard readOnly >= 0 else {
                close(file)
                return nil
            }
            input = (file, readOnly, data.count)
        }
        guard let input else { return nil }
        let written = data.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = pwrite(input.file, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        return written ? input.readOnly : nil
    }

    /// Kills the worker (if it still runs), reaps it, and says how it ended.
    func end(_ reason: Ending) -> Ending {
        guard !ended else { return reason }
        ended = true
        var exitStatus: Int32 = 0
        let signal = wi_isolation_kill_and_reap(pid, &exitStatus)
        if case .died = reason { return .died(signal: max(0, signal), exitStatus: exitStatus) }
        return reason
    }

    /// Whether the process is still there.
    var isRunning: Bool {
        guard !ended else { return false }
        var signal: Int32 = 0, exitStatus: Int32 = 0
        if wi_isolation_try_reap(pid, &signal, &exitStatus) != 0 { ended = true }
        return !ended
    }
}

import CRawCurl
import Foundation
import Synchronization

/// The no-library floor of a Swift caller whose loads run on libcurl's own thread: the C engine
/// of `raw_curl.c` (one multi handle on a plain thread) and a continuation per transfer, resumed
/// from that thread. What is left between it and `curl --parallel` is the price of the hand-offs
/// between the pool and the libcurl thread, which no library that keeps libcurl off the pool avoids.
// @unchecked Sendable: `engine` is set once in init; the C engine is safe to call from any thread.
final class RawCurlFloor: @unchecked Sendable {
    private let waiting = Mutex<[Int: CheckedContinuation<Int, Never>]>([:])
    private let nextID = Atomic<Int>(0)
    private var engine: OpaquePointer!

    /// An engine with at most `width` connections to the host; `likeOurs` gives each transfer
    /// the libcurl options our loader sets.
    init(width: Int, likeOurs: Bool = false) {
        engine = raw_curl_engine_new(width, likeOurs ? 1 : 0, { context, id, result, bytes in
            let floor = Unmanaged<RawCurlFloor>.fromOpaque(context!).takeUnretainedValue()
            floor.finished(id: id, bytes: result == 0 ? bytes : 0)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { raw_curl_engine_free(engine) }

    /// The body size of `url`, 0 when the transfer failed.
    func bytes(of url: URL) async -> Int {
        let id = nextID.add(1, ordering: .relaxed).newValue
        return await withCheckedContinuation { continuation in
            waiting.withLock { $0[id] = continuation }
            raw_curl_engine_add(engine, url.absoluteString, id)
        }
    }

    private func finished(id: Int, bytes: Int) {
        waiting.withLock { $0.removeValue(forKey: id) }?.resume(returning: bytes)
    }
}

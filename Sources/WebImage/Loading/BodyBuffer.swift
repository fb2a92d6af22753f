import CWebImageCodecs
import Foundation

/// A growable byte buffer for response bodies: one announced by Content-Length is allocated
/// once at its full size, and the bytes become `Data` without a copy.
struct BodyBuffer {
    private var pointer: UnsafeMutableRawPointer?
    private var capacity = 0
    private(set) var count = 0

    init() {}

    init(_ data: Data) {
        reserve(data.count)
        data.withUnsafeBytes { if let base = $0.baseAddress { append(base, count: $0.count) } }
    }

    mutating func reserve(_ size: Int) {
        guard size > capacity else { return }
        if pointer == nil, count == 0, let fresh = wi_alloc_bytes(size, 0) {
            pointer = UnsafeMutableRawPointer(fresh)
            capacity = size
            return
        }
        guard let grown = realloc(pointer, size) else { return }
        pointer = grown
        capacity = size
    }

    mutating func append(_ bytes: UnsafeRawPointer, count length: Int) {
        if count + length > capacity { reserve(max(count + length, capacity * 2, 16 * 1024)) }
        guard let pointer else { return }
        (pointer + count).copyMemory(from: bytes, byteCount: length)
        count += length
    }

    /// The bytes as `Data` (ownership moves out; the buffer is empty afterwards).
    mutating func take() -> Data {
        guard let pointer, count > 0 else { return Data() }
        let data = Data(bytesNoCopy: pointer, count: count, deallocator: .free)
        self.pointer = nil
        capacity = 0
        count = 0
        return data
    }

    /// Frees what was not taken (a failed transfer).
    mutating func discard() {
        free(pointer)
        pointer = nil
        capacity = 0
        count = 0
    }
}

import CWebImageCodecs
import Foundation
import Synchronization

/// A growable byte buffer for response bodies: the bytes become `Data` without a copy. Large
/// bodies (announced by Content-Length) go on huge pages, in memory recycled from an earlier
/// large body when there is one (`LargeBodyMemory`).
struct BodyBuffer {
    private var pointer: UnsafeMutableRawPointer?
    private var capacity = 0
    private(set) var count = 0
    /// Whether `pointer` came from `LargeBodyMemory` (and goes back there).
    private var recycled = false

    init() {}

    init(_ data: Data) {
        reserve(data.count)
        data.withUnsafeBytes { if let base = $0.baseAddress { append(base, count: $0.count) } }
    }

    mutating func reserve(_ size: Int) {
        guard size > capacity else { return }
        if pointer == nil, count == 0 {
            if let (memory, usable) = LargeBodyMemory.take(size) {
                (pointer, capacity, recycled) = (memory, usable, true)
                return
            }
            if let fresh = wi_alloc_bytes(size, 0) {
                (pointer, capacity) = (UnsafeMutableRawPointer(fresh), size)
                return
            }
        }
        // Growing (a body longer than announced): the memory leaves the recycling.
        if recycled, let pointer { LargeBodyMemory.forget(pointer) }
        guard let grown = realloc(pointer, size) else { return }
        pointer = grown
        capacity = size
        recycled = false
    }

    mutating func append(_ bytes: UnsafeRawPointer, count length: Int) {
        if count + length > capacity { reserve(max(count + length, capacity * 2, 16 * 1024)) }
        guard let pointer else { return }
        (pointer + count).copyMemory(from: bytes, byteCount: length)
        count += length
    }

    /// The bytes as `Data` (ownership moves out; the buffer is empty afterwards).
    mutating func take() -> Data {
        guard let pointer, count > 0 else {
            discard()
            return Data()
        }
        let data = recycled
            ? Data(bytesNoCopy: pointer, count: count, deallocator: .custom { memory, _ in LargeBodyMemory.give(memory) })
            : Data(bytesNoCopy: pointer, count: count, deallocator: .free)
        self = BodyBuffer()
        return data
    }

    /// Frees what was not taken (a failed transfer).
    mutating func discard() {
        if let pointer {
            if recycled { LargeBodyMemory.give(pointer) } else { free(pointer) }
        }
        self = BodyBuffer()
    }
}

/// Memory for large response bodies (8 MiB and up), kept for the next one: when such a body's
/// `Data` is released, its memory waits here (at most one block) instead of going back to the
/// system, marked `MADV_FREE` so that the kernel may still take its pages under memory pressure.
/// The next large body writes into pages that are already mapped: a fresh 50 MiB buffer costs
/// the kernel zeroing 50 MiB on first touch, as long as the transfer's own copying.
enum LargeBodyMemory {
    /// Bodies from this size on use this memory.
    static let threshold = 8 << 20
    private static let hugePage = 2 << 20

    private struct State {
        /// The block waiting for reuse: address and usable size.
        var spare: (address: Int, capacity: Int)?
        /// Usable size of every block handed out, by address.
        var capacities: [Int: Int] = [:]
    }
    private static let state = Mutex(State())

    /// A block of at least `size` bytes (the spare one if it is large enough), with its usable
    /// size; nil below the threshold or when allocation fails.
    static func take(_ size: Int) -> (UnsafeMutableRawPointer, Int)? {
        guard size >= threshold else { return nil }
        let reused = state.withLock { state -> (Int, Int)? in
            guard let spare = state.spare, spare.capacity >= size else { return nil }
            state.spare = nil
            state.capacities[spare.address] = spare.capacity
            return spare
        }
        if let (address, capacity) = reused, let pointer = UnsafeMutableRawPointer(bitPattern: address) {
            return (pointer, capacity)
        }
        // wi_alloc_bytes rounds large sizes up to whole huge pages.
        let capacity = (size + hugePage - 1) / hugePage * hugePage
        guard let fresh = wi_alloc_bytes(capacity, 0) else { return nil }
        let pointer = UnsafeMutableRawPointer(fresh)
        state.withLock { $0.capacities[Int(bitPattern: pointer)] = capacity }
        return (pointer, capacity)
    }

    /// Takes back a block from `take`: it becomes the spare (replacing a smaller one) or is freed.
    static func give(_ pointer: UnsafeMutableRawPointer) {
        let address = Int(bitPattern: pointer)
        guard let capacity = state.withLock({ $0.capacities.removeValue(forKey: address) }),
              state.withLock({ ($0.spare?.capacity ?? 0) < capacity }) else {
            free(pointer)
            return
        }
        // Marked before it can be taken again: a write after the mark keeps its page.
        _ = madvise(pointer, capacity, MADV_FREE)
        let release = state.withLock { state -> Int? in
            if let spare = state.spare, spare.capacity >= capacity { return address }
            defer { state.spare = (address, capacity) }
            return state.spare?.address
        }
        if let release { free(UnsafeMutableRawPointer(bitPattern: release)) }
    }

    /// Forgets a block that is about to be reallocated elsewhere (it is freed by its new owner).
    static func forget(_ pointer: UnsafeMutableRawPointer) {
        _ = state.withLock { $0.capacities.removeValue(forKey: Int(bitPattern: pointer)) }
    }

    /// Frees the spare block (for tests and for callers that want the memory back now).
    static func releaseSpare() {
        let spare = state.withLock { state -> Int? in
            defer { state.spare = nil }
            return state.spare?.address
        }
        if let spare { free(UnsafeMutableRawPointer(bitPattern: spare)) }
    }

    /// Usable size of the spare block, 0 when there is none.
    static var spareCapacity: Int { state.withLock { $0.spare?.capacity ?? 0 } }
}

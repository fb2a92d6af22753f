import CWebImageCodecs
import Foundation

/// The pixels of one frame: 8-bit RGBA, rows top to bottom, tightly packed (`width * 4` bytes a row).
///
/// `Bitmap` is a value type with copy-on-write storage: copies share memory until one of them
/// is mutated. Alpha is straight (not premultiplied) unless `isPremultiplied` says otherwise;
/// decoders always produce straight alpha. A `Bitmap` is `Sendable` and safe to read from any
/// thread.
public struct Bitmap: Sendable, Equatable {
    /// Width in pixels (at least 1).
    public let width: Int
    /// Height in pixels (at least 1).
    public let height: Int
    /// Whether the colour channels are premultiplied by alpha.
    public var isPremultiplied: Bool
    var storage: PixelStorage

    /// Bytes per row (`width * 4`).
    public var bytesPerRow: Int { width * 4 }
    /// Bytes of pixel memory this bitmap holds.
    public var byteCount: Int { width * height * 4 }

    /// A bitmap of `width` x `height` transparent black pixels.
    public init(width: Int, height: Int, isPremultiplied: Bool = false) {
        precondition(width > 0 && height > 0, "Bitmap dimensions must be positive")
        self.width = width
        self.height = height
        self.isPremultiplied = isPremultiplied
        self.storage = PixelStorage(zeroedCount: width * height * 4)
    }

    /// A bitmap over a copy of `rgba`, which must hold exactly `width * height * 4` bytes.
    public init(width: Int, height: Int, rgba: some Collection<UInt8>, isPremultiplied: Bool = false) {
        precondition(width > 0 && height > 0 && rgba.count == width * height * 4, "RGBA byte count must be width * height * 4")
        self.width = width
        self.height = height
        self.isPremultiplied = isPremultiplied
        self.storage = PixelStorage(copying: rgba)
    }

    /// A bitmap over the pixels that start the shared mapping of `mappedLength` bytes at
    /// `mapping` (readable and writable), which it takes over: unmapped when the last copy goes.
    package init(width: Int, height: Int, adoptingMapping mapping: UnsafeMutableRawPointer, mappedLength: Int, isPremultiplied: Bool) {
        precondition(width > 0 && height > 0 && width * height * 4 <= mappedLength, "the mapping holds the pixels")
        self.init(width: width, height: height,
                  storage: PixelStorage(adoptingMapping: mapping.assumingMemoryBound(to: UInt8.self), count: width * height * 4,
                                        mappedLength: mappedLength),
                  isPremultiplied: isPremultiplied)
    }

    /// A bitmap over a copy of the `width * height * 4` bytes at `bytes` (one memory copy).
    package init(width: Int, height: Int, copyingBytesAt bytes: UnsafeRawPointer, isPremultiplied: Bool) {
        precondition(width > 0 && height > 0, "Bitmap dimensions must be positive")
        let storage = PixelStorage(uninitializedCount: width * height * 4)
        UnsafeMutableRawPointer(storage.pointer).copyMemory(from: bytes, byteCount: width * height * 4)
        self.init(width: width, height: height, storage: storage, isPremultiplied: isPremultiplied)
    }

    init(width: Int, height: Int, storage: PixelStorage, isPremultiplied: Bool = false) {
        self.width = width
        self.height = height
        self.storage = storage
        self.isPremultiplied = isPremultiplied
    }

    /// The pixels as a byte array (a copy).
    public var rgba: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Calls `body` with the pixel bytes. The buffer is valid only inside `body`.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage.pointer, count: byteCount))
    }

    /// Calls `body` with mutable pixel bytes, copying the storage first if it is shared.
    public mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        if !isKnownUniquelyReferenced(&storage) { storage = PixelStorage(copying: storage) }
        return try body(UnsafeMutableRawBufferPointer(start: storage.pointer, count: byteCount))
    }

    /// The pixel at (x, y) as (r, g, b, a).
    public subscript(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        precondition(x >= 0 && y >= 0 && x < width && y < height, "pixel outside the bitmap")
        let p = storage.pointer + (y * width + x) * 4
        return (p[0], p[1], p[2], p[3])
    }

    /// Whether any pixel has alpha below 255.
    public var hasTransparency: Bool {
        withUnsafeBytes { bytes in
            var index = 3
            while index < bytes.count {
                if bytes[index] != 255 { return true }
                index += 4
            }
            return false
        }
    }

    public static func == (lhs: Bitmap, rhs: Bitmap) -> Bool {
        guard lhs.width == rhs.width, lhs.height == rhs.height, lhs.isPremultiplied == rhs.isPremultiplied else { return false }
        if lhs.storage === rhs.storage { return true }
        return memcmp(lhs.storage.pointer, rhs.storage.pointer, lhs.byteCount) == 0
    }
}

/// The memory behind a `Bitmap`, allocated with malloc (decoders hand theirs over), or a shared
/// mapping taken over from a decoding worker.
// @unchecked Sendable: the memory is written only while the storage is uniquely referenced
// (`Bitmap.withUnsafeMutableBytes` copies otherwise) or before it is first shared, so
// concurrent access is read-only.
final class PixelStorage: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<UInt8>
    let count: Int
    /// The length of the mapping `pointer` starts, when the storage is one (unmapped, not
    /// freed); 0 for malloc'd memory.
    private let mappedLength: Int

    /// Adopts a malloc'd buffer; it is freed when the storage goes away.
    init(adopting pointer: UnsafeMutablePointer<UInt8>, count: Int) {
        self.pointer = pointer
        self.count = count
        mappedLength = 0
    }

    /// Adopts the mapping of `mappedLength` bytes at `pointer`, whose first `count` bytes are
    /// the pixels; it is unmapped when the storage goes away.
    init(adoptingMapping pointer: UnsafeMutablePointer<UInt8>, count: Int, mappedLength: Int) {
        self.pointer = pointer
        self.count = count
        self.mappedLength = mappedLength
    }

    convenience init(zeroedCount count: Int) {
        guard let raw = wi_alloc_bytes(count, 1) else { fatalError("out of memory allocating \(count) bytes") }
        self.init(adopting: raw, count: count)
    }

    convenience init(uninitializedCount count: Int) {
        guard let raw = wi_alloc_bytes(count, 0) else { fatalError("out of memory allocating \(count) bytes") }
        self.init(adopting: raw, count: count)
    }

    convenience init(copying other: PixelStorage) {
        self.init(uninitializedCount: other.count)
        pointer.update(from: other.pointer, count: other.count)
    }

    convenience init(copying bytes: some Collection<UInt8>) {
        self.init(uninitializedCount: bytes.count)
        _ = UnsafeMutableBufferPointer(start: pointer, count: bytes.count).initialize(from: bytes)
    }

    /// Freed, or kept for the next decode of the same size (`PixelBufferPool`); a mapping is unmapped.
    deinit {
        if mappedLength > 0 { munmap(pointer, mappedLength) } else { wi_pixel_pool_give(pointer, count) }
    }
}

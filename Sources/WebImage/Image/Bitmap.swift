import CWebImageCodecs
import Foundation

/// The pixels of one frame: RGBA, rows top to bottom, tightly packed; 8 bits a channel
/// (`width * 4` bytes a row), or 16 (`.rgba16`, `width * 8`) for an image decoded at its
/// source's depth (`ImageDecodingOptions.bitDepth`).
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
    /// The pixels' layout: `.rgba8` unless a decode kept more bits.
    public let pixelFormat: PixelFormat
    var storage: PixelStorage

    /// Bytes per row (`width * 4`, or `width * 8` for `.rgba16`).
    public var bytesPerRow: Int { width * pixelFormat.bytesPerPixel }
    /// Bytes of pixel memory this bitmap holds.
    public var byteCount: Int { width * height * pixelFormat.bytesPerPixel }

    /// A bitmap of `width` x `height` transparent black pixels.
    public init(width: Int, height: Int, isPremultiplied: Bool = false) {
        precondition(width > 0 && height > 0, "Bitmap dimensions must be positive")
        self.width = width
        self.height = height
        self.isPremultiplied = isPremultiplied
        self.pixelFormat = .rgba8
        self.storage = PixelStorage(zeroedCount: width * height * 4)
    }

    /// A bitmap over a copy of `rgba`, which must hold exactly `width * height * 4` bytes.
    public init(width: Int, height: Int, rgba: some Collection<UInt8>, isPremultiplied: Bool = false) {
        precondition(width > 0 && height > 0 && rgba.count == width * height * 4, "RGBA byte count must be width * height * 4")
        self.width = width
        self.height = height
        self.isPremultiplied = isPremultiplied
        self.pixelFormat = .rgba8
        self.storage = PixelStorage(copying: rgba)
    }

    /// A 16-bit bitmap (`.rgba16`) over a copy of `rgba16`, which must hold exactly
    /// `width * height * 4` values (R, G, B, A).
    public init(width: Int, height: Int, rgba16: some Collection<UInt16>) {
        precondition(width > 0 && height > 0 && rgba16.count == width * height * 4, "RGBA value count must be width * height * 4")
        let storage = PixelStorage(uninitializedCount: width * height * 8)
        let values = UnsafeMutableRawPointer(storage.pointer).bindMemory(to: UInt16.self, capacity: width * height * 4)
        _ = UnsafeMutableBufferPointer(start: values, count: width * height * 4).initialize(from: rgba16)
        self.init(width: width, height: height, storage: storage, pixelFormat: .rgba16)
    }

    /// A bitmap over the pixels that start the shared mapping of `mappedLength` bytes at
    /// `mapping` (readable and writable), which it takes over: unmapped when the last copy goes.
    package init(width: Int, height: Int, adoptingMapping mapping: UnsafeMutableRawPointer, mappedLength: Int, isPremultiplied: Bool,
                 pixelFormat: PixelFormat = .rgba8) {
        let count = width * height * pixelFormat.bytesPerPixel
        precondition(width > 0 && height > 0 && count <= mappedLength, "the mapping holds the pixels")
        self.init(width: width, height: height,
                  storage: PixelStorage(adoptingMapping: mapping.assumingMemoryBound(to: UInt8.self), count: count,
                                        mappedLength: mappedLength),
                  isPremultiplied: isPremultiplied, pixelFormat: pixelFormat)
    }

    /// A bitmap over a copy of the `width * height * pixelFormat.bytesPerPixel` bytes at `bytes` (one memory copy).
    package init(width: Int, height: Int, copyingBytesAt bytes: UnsafeRawPointer, isPremultiplied: Bool, pixelFormat: PixelFormat = .rgba8) {
        precondition(width > 0 && height > 0, "Bitmap dimensions must be positive")
        let count = width * height * pixelFormat.bytesPerPixel
        let storage = PixelStorage(uninitializedCount: count)
        UnsafeMutableRawPointer(storage.pointer).copyMemory(from: bytes, byteCount: count)
        self.init(width: width, height: height, storage: storage, isPremultiplied: isPremultiplied, pixelFormat: pixelFormat)
    }

    init(width: Int, height: Int, storage: PixelStorage, isPremultiplied: Bool = false, pixelFormat: PixelFormat = .rgba8) {
        self.width = width
        self.height = height
        self.storage = storage
        self.isPremultiplied = isPremultiplied
        self.pixelFormat = pixelFormat
    }

    /// The same pixels in `format`: 16-bit values rounded to 8 bits (v * 255 / 65535), or 8-bit
    /// ones widened (v * 257, exact both ways). Itself when it is in `format` already.
    public func converted(to format: PixelFormat) -> Bitmap {
        guard format != pixelFormat else { return self }
        let values = width * height * 4
        let storage = PixelStorage(uninitializedCount: values * format.bytesPerPixel / 4)
        if format == .rgba8 {
            wi_pixels_16_to_8(UnsafeRawPointer(self.storage.pointer).assumingMemoryBound(to: UInt16.self), storage.pointer, values)
        } else {
            wi_pixels_8_to_16(self.storage.pointer, UnsafeMutableRawPointer(storage.pointer).assumingMemoryBound(to: UInt16.self), values)
        }
        return Bitmap(width: width, height: height, storage: storage, isPremultiplied: isPremultiplied, pixelFormat: format)
    }

    /// The values of a `.rgba16` bitmap (a copy); nil for `.rgba8`.
    public var rgba16: [UInt16]? {
        guard pixelFormat == .rgba16 else { return nil }
        return withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
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

    /// The pixel at (x, y) as (r, g, b, a), in 8 bits (a 16-bit pixel's values rounded).
    public subscript(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        precondition(x >= 0 && y >= 0 && x < width && y < height, "pixel outside the bitmap")
        if pixelFormat == .rgba16 {
            let p = UnsafeRawPointer(storage.pointer).assumingMemoryBound(to: UInt16.self) + (y * width + x) * 4
            func eight(_ v: UInt16) -> UInt8 { UInt8((UInt32(v) * 255 + 32767) / 65535) }
            return (eight(p[0]), eight(p[1]), eight(p[2]), eight(p[3]))
        }
        let p = storage.pointer + (y * width + x) * 4
        return (p[0], p[1], p[2], p[3])
    }

    /// Whether any pixel has alpha below its largest value.
    public var hasTransparency: Bool {
        if pixelFormat == .rgba16 {
            return withUnsafeBytes { bytes in
                let values = bytes.bindMemory(to: UInt16.self)
                var index = 3
                while index < values.count {
                    if values[index] != .max { return true }
                    index += 4
                }
                return false
            }
        }
        return withUnsafeBytes { bytes in
            var index = 3
            while index < bytes.count {
                if bytes[index] != 255 { return true }
                index += 4
            }
            return false
        }
    }

    public static func == (lhs: Bitmap, rhs: Bitmap) -> Bool {
        guard lhs.width == rhs.width, lhs.height == rhs.height, lhs.isPremultiplied == rhs.isPremultiplied,
              lhs.pixelFormat == rhs.pixelFormat else { return false }
        if lhs.storage === rhs.storage { return true }
        return memcmp(lhs.storage.pointer, rhs.storage.pointer, lhs.byteCount) == 0
    }
}

/// How a bitmap's pixels are laid out: R, G, B, A, straight alpha unless the bitmap says
/// otherwise.
public enum PixelFormat: Sendable, Hashable {
    /// 8 bits a channel: four bytes a pixel. What every decode gives by default.
    case rgba8
    /// 16 bits a channel, native-endian `UInt16` values from 0 to 65535: eight bytes a pixel.
    /// What a decode at the source's depth gives for a source of more than 8 bits.
    case rgba16

    /// Bytes a pixel.
    public var bytesPerPixel: Int { self == .rgba8 ? 4 : 8 }
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

import CWebImageCodecs
import Foundation
import Synchronization

/// Glue between the C shim's status codes and buffers and the Swift types.
package enum CodecBridge {
    /// Counts the whole-file JPEG and WebP decodes made in a task and the tasks it starts (tests
    /// check that a streamed image is not decoded again).
    @TaskLocal static var wholeFileDecodes: DecodeCounter?

    /// Adopts the malloc'd pixels of `image` into a `Bitmap` (no copy).
    package static func takeBitmap(_ image: inout wi_image) -> Bitmap? {
        guard let pixels = image.pixels, image.width > 0, image.height > 0 else { return nil }
        image.pixels = nil
        let format: PixelFormat = image.deep != 0 ? .rgba16 : .rgba8
        let count = Int(image.width) * Int(image.height) * format.bytesPerPixel
        return Bitmap(width: Int(image.width), height: Int(image.height),
                      storage: PixelStorage(adopting: pixels, count: count), pixelFormat: format)
    }

    /// The C message buffer as a String.
    package static func message<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The `ImageError` for a failing status.
    package static func error(_ status: Int32, format: ImageFormat, message: String, width: UInt32 = 0, height: UInt32 = 0,
                      limit: Int) -> ImageError {
        switch status {
        case Int32(WI_ERR_TOO_LARGE): return .tooLarge(width: Int(width), height: Int(height), limit: limit)
        case Int32(WI_ERR_TRUNCATED), Int32(WI_NEED_MORE):
            return .undecodable(format, reason: message.isEmpty ? "the data is truncated" : "the data is truncated (\(message))")
        case Int32(WI_ERR_NO_MEMORY): return .undecodable(format, reason: "out of memory")
        default: return .undecodable(format, reason: message.isEmpty ? "corrupt data" : message)
        }
    }

    /// Moves an encoder's buffer into `Data`.
    package static func takeData(_ buffer: inout wi_buffer) -> Data {
        guard let bytes = buffer.data else { return Data() }
        buffer.data = nil
        return Data(bytesNoCopy: bytes, count: buffer.size, deallocator: .free)
    }

    /// Encodes a `.rgba16` `bitmap` with a C encoder of 16-bit samples that fills a `wi_buffer`.
    /// - Throws: `ImageError.encodingFailed` with the encoder's message.
    package static func encodeDeep(_ format: ImageFormat, _ bitmap: Bitmap,
                                   _ encoder: (UnsafePointer<UInt16>?, UInt32, UInt32, UnsafeMutablePointer<wi_buffer>) -> Int32) throws -> Data {
        try encode(format, bitmap.converted(to: .rgba16), as: UInt16.self, encoder)
    }

    /// Encodes `bitmap` with a C encoder that fills a `wi_buffer`. These encoders write 8 bits a
    /// channel: a deep bitmap is rounded once here.
    /// - Throws: `ImageError.encodingFailed` with the encoder's message.
    package static func encodeStill(_ format: ImageFormat, _ bitmap: Bitmap,
                            _ encoder: (UnsafePointer<UInt8>?, UInt32, UInt32, UnsafeMutablePointer<wi_buffer>) -> Int32) throws -> Data {
        try encode(format, bitmap.converted(to: .rgba8), as: UInt8.self, encoder)
    }

    /// `bitmap`'s samples, seen as `Sample`, through `encoder`.
    private static func encode<Sample>(_ format: ImageFormat, _ bitmap: Bitmap, as _: Sample.Type,
                                       _ encoder: (UnsafePointer<Sample>?, UInt32, UInt32, UnsafeMutablePointer<wi_buffer>) -> Int32) throws -> Data {
        var buffer = wi_buffer()
        let status = bitmap.withUnsafeBytes { raw in
            encoder(raw.bindMemory(to: Sample.self).baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), &buffer)
        }
        guard status == WI_OK else {
            free(buffer.data)
            let message = message(buffer.message)
            throw ImageError.encodingFailed(format, reason: message.isEmpty ? "the encoder refused the image" : message)
        }
        return takeData(&buffer)
    }

    /// Calls `body` with the profile `image` embeds when encoded (its RGB ICC profile), or nil
    /// and 0: an image decoded with `ImageColorSpace.original` keeps its colours in another file.
    package static func withProfile<R>(of image: Image, _ body: (UnsafePointer<UInt8>?, Int) throws -> R) rethrows -> R {
        guard let icc = image.colorInfo.embeddableProfile else { return try body(nil, 0) }
        return try icc.withUnsafeBytes { try body($0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
    }

    /// `limit` as the C side's unsigned pixel count.
    package static func pixelLimit(_ options: ImageDecodingOptions) -> UInt64 { UInt64(max(0, options.pixelLimit)) }
}

extension Data {
    /// Calls `body` with a pointer to the bytes (never nil, even for empty data).
    package func withBytePointer<R>(_ body: (UnsafePointer<UInt8>, Int) throws -> R) rethrows -> R {
        try withUnsafeBytes { raw in
            if let base = raw.bindMemory(to: UInt8.self).baseAddress { return try body(base, raw.count) }
            var zero: UInt8 = 0
            return try body(&zero, 0)
        }
    }
}

/// A count of decodes, for tests.
final class DecodeCounter: Sendable {
    let count = Atomic<Int>(0)
}

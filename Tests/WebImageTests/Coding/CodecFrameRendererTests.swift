import CWebImageCodecs
import Foundation
import Synchronization
import Testing
@testable import WebImage

/// The one renderer over the C shims' frame functions: a frame's pixels are adopted as they
/// are, every failing status becomes a typed error of the renderer's format, and the handle is
/// closed once, when the renderer goes.
@Suite struct CodecFrameRendererTests {
    /// A stand-in for a shim's handle (never read through).
    final class Handle {
        let pointer = OpaquePointer(UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1))
        deinit { UnsafeMutableRawPointer(pointer).deallocate() }
    }

    static func write(_ text: String, into image: UnsafeMutablePointer<wi_image>) {
        withUnsafeMutableBytes(of: &image.pointee.message) { buffer in
            let bytes = Array(text.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
    }

    @Test func aRenderedFrameIsAdoptedAndTheHandleClosedOnce() throws {
        let handle = Handle()
        let closed = Mutex<[Int]>([])
        let asked = Mutex<[UInt32]>([])
        do {
            let renderer = CodecFrameRenderer(handle: handle.pointer, format: .gif, render: { pointer, index, out in
                #expect(pointer == handle.pointer)
                asked.withLock { $0.append(index) }
                let pixels = malloc(2 * 1 * 4)!.assumingMemoryBound(to: UInt8.self)
                for byte in 0..<8 { pixels[byte] = UInt8(byte * 10 + Int(index)) }
                out.pointee.pixels = pixels
                out.pointee.width = 2
                out.pointee.height = 1
                return Int32(WI_OK)
            }, close: { pointer in closed.withLock { $0.append(Int(bitPattern: pointer)) } })
            let bitmap = try renderer.render(3)
            #expect(bitmap.width == 2 && bitmap.height == 1)
            #expect(bitmap.withUnsafeBytes { Array($0) } == [3, 13, 23, 33, 43, 53, 63, 73])
            #expect(asked.withLock { $0 } == [3])
            #expect(closed.withLock { $0.isEmpty }, "closed while still in use")
        }
        #expect(closed.withLock { $0 } == [Int(bitPattern: handle.pointer)], "the handle is closed once when the renderer goes")
    }

    @Test func everyFailingStatusIsATypedErrorOfTheFormat() {
        let handle = Handle()
        func failure(_ status: Int, message: String = "") -> (any Error)? {
            let renderer = CodecFrameRenderer(handle: handle.pointer, format: .avif, render: { _, _, out in
                CodecFrameRendererTests.write(message, into: out)
                return Int32(status)
            }, close: { _ in })
            do {
                _ = try renderer.render(5)
                return nil
            } catch {
                return error
            }
        }
        #expect(failure(WI_ERR_CORRUPT, message: "bad tile") as? ImageError == .undecodable(.avif, reason: "bad tile"))
        #expect(failure(WI_ERR_TRUNCATED) as? ImageError == .undecodable(.avif, reason: "the data is truncated (frame 5 could not be rendered)"))
        #expect(failure(WI_ERR_NO_MEMORY) as? ImageError == .undecodable(.avif, reason: "out of memory"))
        #expect(failure(WI_ERR_TOO_LARGE) as? ImageError == .tooLarge(width: 0, height: 0, limit: ImageDecodingOptions.defaultPixelLimit))
        #expect(failure(WI_ERR_ARGUMENT) as? ImageError == .undecodable(.avif, reason: "frame 5 could not be rendered"))
        // WI_OK with no pixels is a failure too, not an empty bitmap.
        #expect(failure(WI_OK) as? ImageError == .undecodable(.avif, reason: "frame 5 could not be rendered"))
    }
}

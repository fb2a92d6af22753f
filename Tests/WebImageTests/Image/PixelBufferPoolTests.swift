import CWebImageCodecs
import Foundation
import Testing
@testable import WebImage

/// Freed pixel buffers recycled for the next decode of the same size. The pool is process-wide:
/// each test uses byte counts no other test decodes, and checks only what other tests running
/// beside it cannot change.
@Suite(.serialized) struct PixelBufferPoolTests {
    @Test func aFreedBufferIsTheNextOfItsSizeAndComesZeroedWhenAsked() throws {
        let size = 300_004   // 75,001 pixels
        let first = try #require(wi_alloc_bytes(size, 0))
        first.update(repeating: 0xAB, count: size)
        wi_pixel_pool_give(first, size)
        // Under AddressSanitizer a kept buffer is poisoned: a pointer kept past its image's end
        // is still caught.
        let asan = ProcessInfo.processInfo.environment["WEBIMAGE_SANITIZER"] == "address"
        #expect(wi_pixel_pool_poisoned(first) == (asan ? 1 : -1))
        let again = try #require(wi_alloc_bytes(size, 1))
        #expect(again == first, "the freed buffer came back")
        #expect(wi_pixel_pool_poisoned(again) == (asan ? 0 : -1))
        #expect(UnsafeBufferPointer(start: again, count: size).allSatisfy { $0 == 0 }, "zeroed when asked")
        // Another size does not take it.
        wi_pixel_pool_give(again, size)
        let other = try #require(wi_alloc_bytes(size + 4, 0))
        #expect(other != again)
        free(other)
        #expect(wi_pixel_pool_take(size) == again)
        free(again)
    }

    @Test func smallAndHugeBuffersAreNotKept() {
        #expect(wi_pixel_pool_recycles(16 << 10) == 0)
        #expect(wi_pixel_pool_recycles(64 << 10) == 1)
        #expect(wi_pixel_pool_recycles(4 << 20) == 1)
        #expect(wi_pixel_pool_recycles((4 << 20) + 1) == 0)
        let small = wi_alloc_bytes(16_388, 0)
        wi_pixel_pool_give(small, 16_388)
        #expect(wi_pixel_pool_take(16_388) == nil)
    }

    @Test func aDecodedImageGivesItsPixelsToTheNextDecode() throws {
        // 263 x 251: a size no other test decodes.
        let size = 263 * 251 * 4
        let data = try Image(bitmap: Fixtures.gradient(width: 263, height: 251, opaque: true)).encoded(as: .jpeg)
        var first: Image? = try Image(data: data)
        let expected = first!.bitmap.withUnsafeBytes { Array($0) }
        let pointer = first!.bitmap.storage.pointer
        first = nil
        // glibc may hand the same address out again by itself: the pool is asked directly.
        #expect(wi_pixel_pool_take(size) == pointer, "the image's pixels went to the pool")
        wi_pixel_pool_give(pointer, size)
        let second = try Image(data: data)
        #expect(second.bitmap.storage.pointer == pointer)
        #expect(wi_pixel_pool_take(size) == nil, "the decode took the buffer out of the pool")
        #expect(second.bitmap.withUnsafeBytes { Array($0) } == expected, "a recycled buffer holds the new image, all of it")
    }

    @Test func theLimitBoundsThePoolAndDrainingOrMemoryPressureEmptiesIt() async {
        let limit = PixelBufferPool.limit
        defer { PixelBufferPool.limit = limit }
        #expect(limit == 16 << 20)
        PixelBufferPool.limit = 1 << 20
        for _ in 0..<8 { wi_pixel_pool_give(wi_alloc_bytes(300_008, 0), 300_008) }
        #expect(PixelBufferPool.heldBytes <= 1 << 20, "the oldest were freed to stay within the limit")
        let kept = wi_pixel_pool_take(300_008)
        #expect(kept != nil)
        free(kept)
        PixelBufferPool.drain()
        #expect(wi_pixel_pool_take(300_008) == nil)
        PixelBufferPool.limit = 0
        wi_pixel_pool_give(wi_alloc_bytes(300_008, 0), 300_008)
        #expect(wi_pixel_pool_take(300_008) == nil, "a limit of 0 keeps nothing")
        PixelBufferPool.limit = 1 << 20
        wi_pixel_pool_give(wi_alloc_bytes(300_008, 0), 300_008)
        await ImageCache.relieveMemoryPressure(MemoryCache())
        #expect(wi_pixel_pool_take(300_008) == nil, "memory pressure drained it")
    }
}

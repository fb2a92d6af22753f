import Foundation
import Testing
@testable import WebImage

/// Response bodies: large ones reuse the memory of the previous large body, with their own bytes.
@Suite(.serialized) struct BodyBufferTests {
    static let size = 9 << 20

    func fill(_ buffer: inout BodyBuffer, with data: Data) {
        data.withUnsafeBytes { buffer.append($0.baseAddress!, count: $0.count) }
    }

    func address(_ data: Data) -> Int { data.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } }

    func pattern(_ seed: UInt8) -> Data {
        var data = Data(repeating: seed, count: Self.size)
        for i in stride(from: 0, to: Self.size, by: 4093) { data[i] = UInt8(truncatingIfNeeded: i / 4093) &+ seed }
        return data
    }

    @Test func aLargeBodyReusesTheSpareBlockWithItsOwnBytes() {
        LargeBodyMemory.releaseSpare()
        let (a, b) = (pattern(0xA5), pattern(0x3C))
        var first = BodyBuffer()
        first.reserve(Self.size)
        fill(&first, with: a)
        var data: Data? = first.take()
        #expect(data == a)
        let firstAddress = address(data!)
        #expect(LargeBodyMemory.spareCapacity == 0)
        data = nil   // the body is released: its memory waits for the next one
        #expect(LargeBodyMemory.spareCapacity >= Self.size)

        var second = BodyBuffer()
        second.reserve(Self.size)
        fill(&second, with: b)
        let again = second.take()
        #expect(address(again) == firstAddress)
        #expect(again == b)
        #expect(LargeBodyMemory.spareCapacity == 0)
    }

    @Test func aBodyLongerThanAnnouncedGrowsOutOfTheRecycling() {
        LargeBodyMemory.releaseSpare()
        var buffer = BodyBuffer()
        buffer.reserve(Self.size)
        let a = pattern(0x11)
        fill(&buffer, with: a)
        fill(&buffer, with: a)   // twice the announced length
        var data: Data? = buffer.take()
        #expect(data?.count == 2 * Self.size)
        #expect(data?.prefix(Self.size) == a && data?.suffix(Self.size) == a)
        data = nil
        #expect(LargeBodyMemory.spareCapacity == 0, "a reallocated block came back to the spare slot")
    }

    @Test func smallBodiesAndDiscardedOnesLeaveTheSpareAlone() {
        LargeBodyMemory.releaseSpare()
        var small = BodyBuffer()
        small.reserve(100_000)
        fill(&small, with: Data(repeating: 1, count: 100_000))
        #expect(small.take().count == 100_000)
        #expect(LargeBodyMemory.spareCapacity == 0)

        var failed = BodyBuffer()
        failed.reserve(Self.size)
        fill(&failed, with: Data(repeating: 2, count: 1000))
        failed.discard()   // a failed transfer: its block becomes the spare
        #expect(LargeBodyMemory.spareCapacity >= Self.size)
        LargeBodyMemory.releaseSpare()
        #expect(LargeBodyMemory.spareCapacity == 0)
    }
}

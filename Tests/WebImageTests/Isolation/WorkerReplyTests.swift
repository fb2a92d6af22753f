import CWebImageIsolation
import Foundation
import Testing
import WebImage
@testable import WebImageIsolation

/// The pool reads a worker's reply as a stranger's input: what it accepts and what it refuses.
@Suite("Worker replies")
struct WorkerReplyTests {
    static let decoded = WorkerReply.Decoded(width: 3, height: 2, durations: [0], loopCount: nil, format: .png, exifOrientation: 6,
                                             orientationApplied: true, premultiplied: false,
                                             colorInfo: ImageColorInfo(iccProfile: Data(repeating: 7, count: 132)))

    /// A pixel file as a worker writes it: pixels, then the tail; sealed unless `sealed` is false.
    static func file(_ decoded: WorkerReply.Decoded, extra: Int = 0, sealed: Bool = true) -> Int32 {
        let bytes = (0..<decoded.pixelBytes).map { UInt8($0 & 255) } + decoded.tail + [UInt8](repeating: 0, count: extra)
        let fd = wi_isolation_memfd("test", UInt64(bytes.count))
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        if sealed { _ = wi_isolation_seal_size(fd) }
        return fd
    }

    @Test("A reply and its file make the image described; the mapping becomes its pixels")
    func accepted() throws {
        guard case .decoded(let header)? = WorkerReply(parsing: WorkerReply.message(Self.decoded)) else { Issue.record("not parsed"); return }
        let fd = Self.file(Self.decoded)
        defer { close(fd) }
        let image = try #require(DecodingWorkerPool.image(header, in: fd, scale: 2, maximumBytes: 1 << 20))
        #expect(image.width == 3 && image.height == 2 && image.scale == 2 && image.exifOrientation == 6)
        #expect(image.bitmap.rgba == (0..<24).map { UInt8($0) })
        #expect(image.colorInfo.iccProfile?.count == 132)
        var copy = image.bitmap
        copy.withUnsafeMutableBytes { $0[0] = 99 }   // a copy is written, not the shared pixels
        #expect(image.bitmap.rgba[0] == 0 && copy.rgba[0] == 99)
    }

    @Test("A file whose size is not sealed, too long, or over the byte limit is refused")
    func refused() throws {
        guard case .decoded(let header)? = WorkerReply(parsing: WorkerReply.message(Self.decoded)) else { Issue.record("not parsed"); return }
        for (fd, limit) in [(Self.file(Self.decoded, sealed: false), 1 << 20), (Self.file(Self.decoded, extra: 1), 1 << 20), (Self.file(Self.decoded), 23)] {
            #expect(DecodingWorkerPool.image(header, in: fd, scale: 1, maximumBytes: limit) == nil)
            close(fd)
        }
    }

    @Test("Messages that are not replies are refused", arguments: [
        [UInt8](), Array("garbage".utf8), WorkerReply.message(decoded).dropLast(1).map { $0 }, WorkerReply.message(decoded) + [0],
        WorkerReply.message(.undecodable(.svg, reason: "x")) + [1],
    ])
    func malformed(bytes: [UInt8]) {
        #expect(WorkerReply(parsing: bytes) == nil)
    }

    @Test("Every error a decoder gives crosses as itself", arguments: [
        ImageError.emptyData, .unsupportedFormat(.unknown), .undecodable(.svg, reason: "a reason"),
        .tooLarge(width: 65535, height: 65535, limit: 100), .animationTooLarge(width: 2000, height: 2000, frames: 300, limit: 50),
    ])
    func errors(error: ImageError) {
        #expect(WorkerReply(parsing: WorkerReply.message(error)) == .failed(error))
    }

    @Test("A request crosses with every option")
    func request() {
        var options = ImageDecodingOptions(maxPixelSize: 256, maxPixelCount: 1000, firstFrameOnly: true, preloadAllFrames: true,
                                           appliesOrientation: false, pixelLimit: 5000, scale: 2, fillSize: PixelSize(width: 10, height: 0),
                                           colorSpace: .original)
        options.bitDepth = .source
        options.pageIndex = 3
        options.dynamicRange = .high
        options.fillAnchor = FillAnchor(x: 0.25, y: 1)
        let request = WorkerRequest(options: options, cpuSeconds: 7, dataLength: 123)
        #expect(WorkerRequest(parsing: request.bytes) == request)
        #expect(WorkerRequest(parsing: request.bytes)?.options.dynamicRange == .high)
        #expect(WorkerRequest(parsing: request.bytes)?.options.fillAnchor == FillAnchor(x: 0.25, y: 1))
        // An anchor outside 0...1 (or half of one) is not a request.
        for (x, y) in [(1.5, 0.5), (0.5, -1.0), (-1.0, 0.5), (Double.nan, 0.5)] {
            var bytes = request.bytes
            let at = 4 + 8 * 7   // after the magic and seven numbers
            withUnsafeBytes(of: x.bitPattern.littleEndian) { bytes.replaceSubrange(at..<at + 8, with: $0) }
            withUnsafeBytes(of: y.bitPattern.littleEndian) { bytes.replaceSubrange(at + 8..<at + 16, with: $0) }
            #expect(WorkerRequest(parsing: bytes) == nil, "anchor \(x), \(y)")
        }
        // And the defaults cross as defaults.
        let plain = WorkerRequest(options: ImageDecodingOptions(), cpuSeconds: 7, dataLength: 1)
        #expect(WorkerRequest(parsing: plain.bytes)?.options == ImageDecodingOptions())
    }
}

import Foundation
import Testing
@testable import WebImage

/// A progressive JPEG's scans each walk every block of the image, however few bytes they hold:
/// a file of thousands of empty scans costs seconds of CPU per megabyte (the incremental fuzzer
/// found one that took over 10 s). Both JPEG decoders stop at the 501st scan.
@Suite struct JPEGScanLimitTests {
    /// A 512x512 progressive JPEG (libjpeg's 10 scans) with its last scan repeated `extra` times.
    static func manyScans(extra: Int) throws -> Data {
        let data = try ImageCoders.shared.encode(Image(bitmap: Fixtures.gradient(width: 512, height: 512, opaque: true)), as: .jpeg,
                                                 options: ImageEncodingOptions(progressive: true))
        let bytes = [UInt8](data)
        // Walk the segments to the last scan: its SOS header, then entropy-coded data up to the
        // next marker that is neither a stuffed 0xFF00 nor a restart marker.
        var offset = 2, lastScan = 0..<0
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] != 0xD9 {
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            var end = offset + 2 + length
            if bytes[offset + 1] == 0xDA {
                while !(bytes[end] == 0xFF && bytes[end + 1] != 0 && !(0xD0...0xD7).contains(bytes[end + 1])) { end += 1 }
                lastScan = offset..<end
            }
            offset = end
        }
        #expect(!lastScan.isEmpty && bytes[offset + 1] == 0xD9)
        var result = Data(bytes[..<lastScan.upperBound])
        for _ in 0..<extra { result.append(contentsOf: bytes[lastScan]) }
        result.append(contentsOf: bytes[lastScan.upperBound...])
        return result
    }

    /// Decodes `data` whole and in 1 KB pieces with a preview after each.
    static func decodeBothWays(_ data: Data) -> [Result<Image, ImageError>] {
        let whole = Result { try JPEGCoder().decode(data, options: .init()) }.mapError { $0 as! ImageError }
        let streamed = Result { () throws -> Image in
            let decoder = try #require(JPEGCoder().makeIncrementalDecoder(options: .init()))
            var offset = 0
            while offset < data.count {
                try decoder.append(data[offset..<min(data.count, offset + 1024)])
                _ = try decoder.preview()
                offset += 1024
            }
            return try decoder.finish()
        }.mapError { $0 as! ImageError }
        return [whole, streamed]
    }

    @Test func fiveHundredScansDecode() throws {
        for result in Self.decodeBothWays(try Self.manyScans(extra: 490)) {
            let image = try result.get()
            #expect(image.width == 512 && image.height == 512)
        }
    }

    @Test func theFiveHundredAndFirstScanIsRefused() throws {
        for result in Self.decodeBothWays(try Self.manyScans(extra: 491)) {
            #expect(throws: ImageError.undecodable(.jpeg, reason: "more than 500 scans")) { try result.get() }
        }
        // The streaming decoder stops while absorbing the scans, before any output pass.
        let decoder = try #require(JPEGCoder().makeIncrementalDecoder(options: .init()))
        #expect(throws: ImageError.undecodable(.jpeg, reason: "more than 500 scans")) {
            try decoder.append(try Self.manyScans(extra: 491))
        }
    }
}

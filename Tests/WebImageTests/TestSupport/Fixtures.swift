import Foundation
@testable import WebImage

/// Small images made in memory for tests.
enum Fixtures {
    /// A smooth gradient with an alpha ramp, deterministic.
    static func gradient(width: Int, height: Int, opaque: Bool = false) -> Bitmap {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                bytes[i] = UInt8(x * 255 / max(1, width - 1))
                bytes[i + 1] = UInt8(y * 255 / max(1, height - 1))
                bytes[i + 2] = UInt8((x + y) * 255 / max(1, width + height - 2))
                bytes[i + 3] = opaque ? 255 : UInt8(128 + (x * 127 / max(1, width - 1)))
            }
        }
        return Bitmap(width: width, height: height, rgba: bytes)
    }

    /// A 1x1 GIF whose only pixel uses palette index 3 of a 2-colour palette (out of range).
    static let gifWithOutOfRangeIndex = Data([
        0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, // header, screen, GCT of 2
        0xFF, 0x00, 0x00, 0x00, 0xFF, 0x00,                                           // red, green
        0x2C, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,                   // image 1x1 at 0,0
        0x02, 0x02, 0x5C, 0x01, 0x00,                                                 // LZW: clear, 3, end
        0x3B,
    ])

    /// A PNG header (signature + valid IHDR) declaring `width` x `height` RGBA8, with no data.
    static func pngHeader(width: UInt32, height: UInt32) -> Data {
        var data = Data(PNGChunks.signature)
        var ihdr = Data()
        ihdr.appendBigEndian(width)
        ihdr.appendBigEndian(height)
        ihdr.append(contentsOf: [8, 6, 0, 0, 0])
        data.appendPNGChunk(type: "IHDR", data: ihdr)
        return data
    }

    /// Mean absolute difference per channel between two same-size bitmaps.
    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                var total = 0
                for i in 0..<x.count { total += abs(Int(x[i]) - Int(y[i])) }
                return Double(total) / Double(x.count)
            }
        }
    }
}

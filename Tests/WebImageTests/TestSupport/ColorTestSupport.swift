import CWebImageCodecs
import Foundation
@testable import WebImage

/// ICC profiles the colour tests embed.
enum ColorTestProfiles {
    /// lcms2's sRGB profile.
    static let srgb: Data? = {
        var buffer = wi_buffer()
        guard wi_color_srgb_profile(&buffer) == WI_OK else { return nil }
        return CodecBridge.takeData(&buffer)
    }()

    /// ProPhoto RGB (ROMM): D50, its primaries, gamma 1.8, built by lcms2.
    static let proPhoto: Data? = rgb(white: (0.3457, 0.3585), primaries: [0.7347, 0.2653, 0.1596, 0.8404, 0.0366, 0.0001],
                                     gamma: 1.8)

    /// An RGB matrix-shaper profile built by lcms2: white and primaries (x, y of red, green,
    /// blue) and one gamma for the three curves.
    static func rgb(white: (Double, Double), primaries: [Double], gamma: Double) -> Data? {
        var buffer = wi_buffer()
        let whitePoint = [white.0, white.1]
        guard primaries.count == 6, wi_color_rgb_profile(whitePoint, primaries, gamma, &buffer) == WI_OK else { return nil }
        return CodecBridge.takeData(&buffer)
    }
}

/// PNG chunk surgery for tests.
enum PNGTestChunks {
    /// `png` with its iCCP chunk (if any) replaced by one holding `profile` (zlib, stored blocks).
    static func replacingICCP(in png: Data, with profile: Data) throws -> Data {
        try replacing("iCCP", in: png, with: Data("icc".utf8) + [0, 0] + zlibStored(profile))
    }

    /// `png` with its `type` chunk (if any) replaced by one holding `body`, right after IHDR.
    static func replacing(_ chunkType: String, in png: Data, with body: Data) throws -> Data {
        var chunks: [(type: String, body: Data)] = []
        var offset = 8
        let bytes = [UInt8](png)
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            chunks.append((type, Data(bytes[(offset + 8)..<(offset + 8 + length)])))
            offset += 12 + length
        }
        var out = Data(bytes[0..<8])
        for chunk in chunks where chunk.type != chunkType {
            append(chunk.type, chunk.body, to: &out)
            if chunk.type == "IHDR" { append(chunkType, body, to: &out) }
        }
        return out
    }

    private static func append(_ type: String, _ body: Data, to out: inout Data) {
        let typed = Data(type.utf8) + body
        out.append(contentsOf: withUnsafeBytes(of: UInt32(body.count).bigEndian, Array.init))
        out.append(typed)
        let crc = typed.withUnsafeBytes { wi_crc32(0, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
        out.append(contentsOf: withUnsafeBytes(of: crc.bigEndian, Array.init))
    }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    private static func zlibStored(_ data: Data) -> Data {
        var out = Data([0x78, 0x01])
        let bytes = [UInt8](data)
        var index = 0
        repeat {
            let count = min(65535, bytes.count - index)
            let final: UInt8 = index + count == bytes.count ? 1 : 0
            out.append(final)
            out.append(contentsOf: [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)])
            out.append(contentsOf: bytes[index..<(index + count)])
            index += count
        } while index < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        out.append(contentsOf: withUnsafeBytes(of: (b << 16 | a).bigEndian, Array.init))
        return out
    }
}

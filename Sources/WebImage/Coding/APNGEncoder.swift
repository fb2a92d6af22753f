import CWebImageCodecs
import Foundation

/// Writes an animated image as APNG: libpng compresses each frame (whole-canvas frames, as the
/// library holds them), and the frames' IDAT data become the default image (frame 0) and the
/// `fdAT` chunks of the others, each behind its `fcTL`, after one `acTL` with the frame count
/// and the loop count. Readers without APNG support show the first frame.
enum APNGEncoder {
    /// The APNG bytes of `image` (every frame, durations, loop count).
    /// - Throws: `ImageError.encodingFailed` when libpng refuses a frame.
    static func encode(_ image: Image, level: Int32 = 6) throws -> Data {
        // One colour type for every frame: RGBA when any of them has transparency. Frames decoded
        // on demand are encoded one at a time (one canvas in memory, not every frame), as RGBA:
        // knowing whether any has transparency would decode them all twice.
        let alpha: Int32
        if case .preloaded(let frames) = image.frames {
            alpha = frames.contains { $0.bitmap.hasTransparency } ? 1 : 0
        } else {
            alpha = 1
        }
        let frameCount = image.frameCount
        var out = Data(PNGChunks.signature)
        var sequence: UInt32 = 0
        for index in 0..<frameCount {
            if Task.isCancelled { throw CancellationError() }
            let frame = try image.frame(at: index)
            guard frame.bitmap.width == image.width, frame.bitmap.height == image.height else {
                throw ImageError.encodingFailed(.png, reason: "frame \(index) is not the size of the canvas")
            }
            let png = try CodecBridge.encodeStill(.png, frame.bitmap) { wi_png_encode($0, $1, $2, alpha, level, 1, nil, 0, $3) }
            let chunks = PNGChunks(png).chunks
            if index == 0 {
                guard let header = chunks.first, header.type == "IHDR" else {
                    throw ImageError.encodingFailed(.png, reason: "libpng wrote no header")
                }
                out.append(png[header.whole])
                append("acTL", [UInt32(frameCount), UInt32(max(0, image.loopCount ?? 0))].bigEndianBytes, to: &out)
            }
            append("fcTL", frameControl(sequence: sequence, width: image.width, height: image.height, duration: frame.duration), to: &out)
            sequence += 1
            for chunk in chunks where chunk.type == "IDAT" {
                if index == 0 {
                    out.append(png[chunk.whole])
                } else {
                    append("fdAT", [sequence].bigEndianBytes + [UInt8](png[chunk.data]), to: &out)
                    sequence += 1
                }
            }
        }
        append("IEND", [], to: &out)
        return out
    }

    /// An fcTL body: the whole canvas, no disposal, source blending, the delay in ms
    /// (centiseconds past 65.535 s, the most a 16-bit numerator holds in ms).
    private static func frameControl(sequence: UInt32, width: Int, height: Int, duration: Double) -> [UInt8] {
        let milliseconds = max(0, (duration * 1000).rounded())
        let (numerator, denominator): (UInt16, UInt16) = milliseconds <= 65_535
            ? (UInt16(milliseconds), 1000) : (UInt16(min(65_535, (milliseconds / 10).rounded())), 100)
        var body = [sequence, UInt32(width), UInt32(height), 0, 0].bigEndianBytes
        body += [UInt8(numerator >> 8), UInt8(numerator & 0xFF), UInt8(denominator >> 8), UInt8(denominator & 0xFF)]
        body += [0, 0]   // dispose_op none, blend_op source
        return body
    }

    /// Appends a chunk.
    private static func append(_ type: String, _ body: [UInt8], to out: inout Data) {
        out.append(chunk(type, body))
    }

    /// A PNG chunk: length, type, data, CRC of type and data.
    static func chunk(_ type: String, _ body: [UInt8]) -> Data {
        let typed = Array(type.utf8) + body
        let crc = typed.withUnsafeBufferPointer { wi_crc32(0, $0.baseAddress, $0.count) }
        return Data([UInt32(body.count)].bigEndianBytes + typed + [crc].bigEndianBytes)
    }
}

extension Array where Element == UInt32 {
    /// The values as big-endian bytes, one after the other.
    var bigEndianBytes: [UInt8] {
        flatMap { [UInt8($0 >> 24), UInt8(($0 >> 16) & 0xFF), UInt8(($0 >> 8) & 0xFF), UInt8($0 & 0xFF)] }
    }
}

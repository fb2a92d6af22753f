import Foundation
import WebImage

/// What every fuzz target does with one input: decode it under a small pixel limit (so that the
/// fuzzer explores parsing, not huge allocations), touching every frame. Any `ImageError` is a
/// fine outcome; a crash, a hang, a leak or a sanitizer report is a finding.
public enum Fuzz {
    /// The bytes libFuzzer hands over, as `Data` (copied: the buffer is libFuzzer's).
    public static func data(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Data { Data(bytes: bytes, count: count) }

    /// Decodes `data` with `coder`, rendering every frame of an animation.
    public static func decode(_ data: Data, with coder: some ImageCoder) {
        render(try? coder.decode(data, options: limited))
    }

    /// Decodes `data` with `coder` at the source's depth (16 bits a channel where it has them).
    public static func decodeDeep(_ data: Data, with coder: some ImageCoder) {
        var options = limited
        options.bitDepth = .source
        render(try? coder.decode(data, options: options))
    }

    /// Decodes `data` with `coder` at a size its last byte picks (1 to 256 pixels on the longer
    /// side), so that decoders that reduce while they decode (PNG's rows, JPEG's scaled rows)
    /// see every ratio.
    public static func decodeAtSize(_ data: Data, with coder: some ImageCoder) {
        var options = limited
        options.maxPixelSize = Int(data.last ?? 0) + 1
        render(try? coder.decode(data, options: options))
    }

    /// Decodes `data` to a fill box cut at an anchor, all three from its last bytes (for a
    /// JPEG: only the box's rows are decoded, those above skipped).
    public static func decodeFillCut(_ data: Data, with coder: some ImageCoder) {
        guard data.count > 3 else { return }
        let tail = Array(data.suffix(3))
        var options = limited
        options.fillSize = PixelSize(width: Int(tail[0]) + 1, height: Int(tail[1]) + 1)
        options.fillAnchor = FillAnchor(x: Double(tail[2] & 15) / 15, y: Double(tail[2] >> 4) / 15)
        render(try? coder.decode(data, options: options))
    }

    /// Decodes `data` with the coder the registry picks for it.
    public static func decodeWithRegistry(_ data: Data) {
        render(try? ImageCoders.shared.decode(data, options: limited))
    }

    /// Renders the frames of an animation (at most 64).
    static func render(_ image: Image?) {
        guard let image else { return }
        for index in 0..<min(image.frameCount, 64) { _ = try? image.frame(at: index) }
    }

    /// Feeds `data` to `coder`'s incremental decoder in pieces whose sizes come from the first
    /// bytes, then finishes. A preview is asked for after the piece that crosses each 64th of
    /// the input (and after the first): about 64 in all, as the manager asks at most once per
    /// preview interval. A preview shows the whole image so far, so one after every byte of a
    /// large file is quadratic by design; the pieces still come as small as one byte.
    public static func stream(_ data: Data, with coder: any ImageCoder) {
        guard data.count > 2, let decoder = coder.makeIncrementalDecoder(options: limited) else { return }
        let sizes = [Int(data[data.startIndex]) + 1, Int(data[data.startIndex + 1]) * 16 + 1]
        let body = data.dropFirst(2)
        let spacing = max(1, body.count / 64)
        var offset = body.startIndex, turn = 0, nextPreview = body.startIndex
        do {
            while offset < body.endIndex {
                let end = min(body.endIndex, offset + sizes[turn % 2])
                try decoder.append(Data(body[offset..<end]))
                if end > nextPreview {
                    _ = try decoder.preview()
                    nextPreview = end + spacing - 1
                }
                offset = end
                turn += 1
            }
            _ = try decoder.finish()
        } catch {}
    }

    /// At most 4 megapixels: a fuzzed header asks for anything, and the fuzzer should spend
    /// its time in the parsers, not in allocating.
    static let limited = ImageDecodingOptions(pixelLimit: 4_000_000)
}

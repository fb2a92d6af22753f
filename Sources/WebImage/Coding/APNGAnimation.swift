import CWebImageCodecs
import Foundation

/// The animation of an APNG file: its frame controls and where each frame's data lies.
///
/// Frames are decoded by rebuilding a small PNG stream per frame (IHDR with the frame's size,
/// the palette and tRNS of the file, the frame's data as IDAT) and giving it to libpng, then
/// composited onto the canvas with the frame's blend and dispose operations.
struct APNGAnimation {
    struct Frame {
        var x, y, width, height: Int
        var duration: Double
        var dispose: UInt8
        var blend: UInt8
        var dataRanges: [Range<Int>]
        var isDefaultImage: Bool
    }

    let data: Data
    let canvasWidth: Int
    let canvasHeight: Int
    let frames: [Frame]
    let loopCount: Int
    let options: ImageDecodingOptions
    /// IHDR bytes 8..<13 (depth, colour type, compression, filter, interlace) and the chunks
    /// every frame stream needs (PLTE, tRNS), whole.
    let headerTail: Data
    let sharedChunks: [Range<Int>]

    /// The animation, or nil when the file is to be shown as a still PNG: no valid acTL before
    /// the image data, or no valid first frame (browsers then show the default image).
    /// - Throws: `ImageError.tooLarge` when the canvas is over the pixel limit.
    init?(data: Data, chunks: PNGChunks, options: ImageDecodingOptions) throws {
        guard let ihdr = chunks.chunks.first, ihdr.type == "IHDR", ihdr.data.count == 13 else { return nil }
        guard let firstData = chunks.chunks.firstIndex(where: { $0.type == "IDAT" }) else { return nil }
        // An acTL with a bad CRC is an ancillary chunk libpng would drop: the file is a still PNG.
        // A second acTL, a frame count of 0 or over 2^31-1 make the acTL invalid: a still PNG.
        let actls = chunks.chunks[..<firstData].filter { $0.type == "acTL" }
        guard actls.count == 1, let actl = actls.first, actl.crcMatches, actl.data.count == 8 else { return nil }
        let declared = Int(data.bigEndianUInt32(at: actl.data.lowerBound))
        guard declared > 0, declared <= Int(Int32.max) else { return nil }
        self.data = data
        self.options = options
        canvasWidth = Int(data.bigEndianUInt32(at: ihdr.data.lowerBound))
        canvasHeight = Int(data.bigEndianUInt32(at: ihdr.data.lowerBound + 4))
        guard canvasWidth > 0, canvasHeight > 0 else { throw ImageError.undecodable(.png, reason: "zero image dimension") }
        guard !options.exceedsPixelLimit(width: canvasWidth, height: canvasHeight) else {
            throw ImageError.tooLarge(width: canvasWidth, height: canvasHeight, limit: options.pixelLimit)
        }
        loopCount = Int(data.bigEndianUInt32(at: actl.data.lowerBound + 4))
        headerTail = data[(ihdr.data.lowerBound + 8)..<ihdr.data.upperBound]
        sharedChunks = chunks.chunks.filter { ["PLTE", "tRNS"].contains($0.type) }.map(\.whole)
        frames = APNGAnimation.collectFrames(data: data, chunks: chunks, declared: declared,
                                              canvas: (canvasWidth, canvasHeight))
        if chunks.endsMidChunk, frames.count < declared {
            throw ImageError.undecodable(.png, reason: "the data is truncated inside APNG frame \(frames.count)")
        }
        guard !frames.isEmpty else { return nil }
    }

    /// Frames in order, up to the first structural error (bad sequence number, frame outside
    /// the canvas, missing data): later frames are dropped, as browsers play such files.
    private static func collectFrames(data: Data, chunks: PNGChunks, declared: Int, canvas: (Int, Int)) -> [Frame] {
        var frames: [Frame] = []
        var current: Frame?
        var expectedSequence: UInt32 = 0
        var seenImageData = false
        func close() -> Bool {
            guard let frame = current else { return true }
            current = nil
            guard !frame.dataRanges.isEmpty else { return false }
            frames.append(frame)
            return true
        }
        loop: for chunk in chunks.chunks {
            switch chunk.type {
            case "fcTL":
                guard chunk.crcMatches, chunk.data.count == 26, frames.count < declared else { current = nil; break loop }
                let o = chunk.data.lowerBound
                guard data.bigEndianUInt32(at: o) == expectedSequence else { current = nil; break loop }
                expectedSequence += 1
                guard close() else { current = nil; break loop }
                if frames.count == declared { break loop }
                let w = Int(data.bigEndianUInt32(at: o + 4)), h = Int(data.bigEndianUInt32(at: o + 8))
                let x = Int(data.bigEndianUInt32(at: o + 12)), y = Int(data.bigEndianUInt32(at: o + 16))
                guard w > 0, h > 0, x + w <= canvas.0, y + h <= canvas.1 else { current = nil; break loop }
                let numerator = Double(data.bigEndianUInt16(at: o + 20))
                let denominator = Double(data.bigEndianUInt16(at: o + 22))
                let dispose = data[data.startIndex + o + 24], blend = data[data.startIndex + o + 25]
                guard dispose <= 2, blend <= 1 else { current = nil; break loop }
                let isDefault = !seenImageData
                if isDefault, w != canvas.0 || h != canvas.1 || x != 0 || y != 0 { break loop }
                current = Frame(x: x, y: y, width: w, height: h,
                                duration: numerator / (denominator == 0 ? 100 : denominator),
                                dispose: frames.isEmpty && dispose == 2 ? 1 : dispose, blend: blend,
                                dataRanges: [], isDefaultImage: isDefault)
            case "IDAT":
                seenImageData = true
                if current?.isDefaultImage == true { current?.dataRanges.append(chunk.data) }
            case "fdAT":
                guard chunk.crcMatches, chunk.data.count >= 4,
                      data.bigEndianUInt32(at: chunk.data.lowerBound) == expectedSequence,
                      current != nil, current?.isDefaultImage == false else { current = nil; break loop }
                expectedSequence += 1
                current?.dataRanges.append((chunk.data.lowerBound + 4)..<chunk.data.upperBound)
            case "IEND":
                break loop
            default:
                continue
            }
        }
        // The last frame ends at IEND, or where the chunks end when IEND is missing.
        if current != nil, frames.count < declared { _ = close() }
        return frames
    }

    /// The image: frame 0 decoded now, the rest on demand (or now with `preloadAllFrames`).
    func image(exifOrientation: Int?) throws -> Image {
        let finishing = DecodeFinishing(width: canvasWidth, height: canvasHeight, exifOrientation: exifOrientation, options: options)
        return try AnimationAssembly.image(renderer: APNGRenderer(animation: self), durations: frames.map(\.duration),
                                           format: .png, loopCount: loopCount, finishing: finishing,
                                           orientation: exifOrientation, options: options)
    }

    /// A standalone PNG stream holding frame `index` alone.
    func frameStream(_ index: Int) -> Data {
        let frame = frames[index]
        if frame.isDefaultImage { return data }
        var stream = Data(PNGChunks.signature)
        var ihdr = Data()
        ihdr.appendBigEndian(UInt32(frame.width))
        ihdr.appendBigEndian(UInt32(frame.height))
        ihdr.append(headerTail)
        stream.appendPNGChunk(type: "IHDR", data: ihdr)
        for range in sharedChunks { stream.append(data[range]) }
        for range in frame.dataRanges { stream.appendPNGChunk(type: "IDAT", data: data[range]) }
        stream.appendPNGChunk(type: "IEND", data: [UInt8]())
        return stream
    }
}

/// Composites APNG frames in order, keeping one canvas (and one saved copy for dispose-previous).
final class APNGRenderer: FrameRenderer {
    private let animation: APNGAnimation
    private var canvas: Bitmap
    private var saved: Bitmap?
    private var next = 0

    init(animation: APNGAnimation) {
        self.animation = animation
        canvas = Bitmap(width: animation.canvasWidth, height: animation.canvasHeight)
    }

    func render(_ index: Int) throws -> Bitmap {
        if index < next {
            canvas = Bitmap(width: animation.canvasWidth, height: animation.canvasHeight)
            next = 0
        }
        while next <= index {
            if next > 0 { dispose(animation.frames[next - 1]) }
            let frame = animation.frames[next]
            if frame.dispose == 2 { saved = canvas }
            let pixels = try PNGCoder.decodeStill(animation.frameStream(next), options: ImageDecodingOptions(pixelLimit: animation.options.pixelLimit))
            guard pixels.width == frame.width, pixels.height == frame.height else {
                throw ImageError.undecodable(.png, reason: "APNG frame \(next) does not match its frame control")
            }
            let (cw, ch) = (UInt32(canvas.width), UInt32(canvas.height))
            canvas.withUnsafeMutableBytes { dst in
                pixels.withUnsafeBytes { src in
                    wi_composite(dst.bindMemory(to: UInt8.self).baseAddress, cw, ch, src.bindMemory(to: UInt8.self).baseAddress,
                                 UInt32(frame.x), UInt32(frame.y), UInt32(frame.width), UInt32(frame.height),
                                 frame.blend == 1 ? 1 : 0)
                }
            }
            next += 1
        }
        return canvas
    }

    private func dispose(_ frame: APNGAnimation.Frame) {
        switch frame.dispose {
        case 1:
            let (cw, ch) = (UInt32(canvas.width), UInt32(canvas.height))
            canvas.withUnsafeMutableBytes { dst in
                wi_clear_rect(dst.bindMemory(to: UInt8.self).baseAddress, cw, ch, UInt32(frame.x), UInt32(frame.y),
                              UInt32(frame.width), UInt32(frame.height))
            }
        case 2:
            if let saved { canvas = saved }
        default:
            break
        }
    }
}

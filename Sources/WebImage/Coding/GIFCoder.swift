import CWebImageCodecs
import Foundation

/// GIF through giflib: global and local palettes, transparency, interlacing, every disposal
/// method composited into full frames on a transparent canvas (as browsers draw them), the
/// NETSCAPE2.0 loop count, and per-frame delays with the browsers' rule (under 20 ms plays
/// as 100 ms). Out-of-range palette indices draw opaque black; frames reaching outside the
/// canvas are clipped.
public struct GIFCoder: ImageCoder {
    /// The GIF coder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .gif }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        try GIFCoder.decode(data, options: options, tolerateTruncation: false)
    }

    static func decode(_ data: Data, options: ImageDecodingOptions, tolerateTruncation: Bool) throws -> Image {
        var status: Int32 = 0
        var message = wi_image().message
        let handle = withUnsafeMutableBytes(of: &message) { buffer in
            data.withBytePointer {
                wi_gif_open($0, $1, CodecBridge.pixelLimit(options), tolerateTruncation ? 1 : 0, &status,
                            buffer.bindMemory(to: CChar.self).baseAddress)
            }
        }
        guard let handle else {
            if status == WI_ERR_TOO_LARGE, let (w, h) = GIFCoder.screenSize(data) {
                throw ImageError.tooLarge(width: w, height: h, limit: options.pixelLimit)
            }
            throw CodecBridge.error(status, format: .gif, message: CodecBridge.message(message), limit: options.pixelLimit)
        }
        let renderer = CodecFrameRenderer(handle: handle, format: .gif, render: { wi_gif_render($0, $1, $2) }, close: { wi_gif_close($0) })
        let count = options.firstFrameOnly ? 1 : Int(wi_gif_frame_count(handle))
        let durations = (0..<count).map { GIFCoder.duration(centiseconds: wi_gif_frame_delay(handle, UInt32($0))) }
        let loop = wi_gif_loop_count(handle)
        let finishing = DecodeFinishing(width: Int(wi_gif_width(handle)), height: Int(wi_gif_height(handle)),
                                        exifOrientation: nil, options: options)
        return try AnimationAssembly.image(renderer: renderer, durations: durations, format: .gif,
                                           loopCount: loop < 0 ? nil : Int(loop), finishing: finishing, orientation: nil,
                                           options: options)
    }

    /// A frame delay in seconds under the browsers' rule: delays under 20 ms play as 100 ms.
    static func duration(centiseconds: UInt32) -> Double {
        centiseconds < 2 ? 0.1 : Double(centiseconds) / 100
    }

    /// The logical screen size from the header.
    static func screenSize(_ data: Data) -> (Int, Int)? {
        guard data.count >= 10 else { return nil }
        let i = data.startIndex
        return (Int(data[i + 6]) | Int(data[i + 7]) << 8, Int(data[i + 8]) | Int(data[i + 9]) << 8)
    }

    public func canEncode(_ format: ImageFormat) -> Bool { format == .gif }

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        guard format == .gif else { throw ImageError.encodingFailed(format, reason: "the GIF coder writes GIF only") }
        // No NETSCAPE block for an animation that plays once: every reader plays such a GIF once
        // (a NETSCAPE count of 1 means "repeat once" to some browsers).
        let loop: Int32 = image.isAnimated && image.loopCount != 1 ? Int32(image.loopCount ?? 0) : -1
        guard let encoder = wi_gif_encoder_create(UInt32(image.width), UInt32(image.height), loop) else {
            throw ImageError.encodingFailed(.gif, reason: "GIF canvases are at most 65535 pixels a side")
        }
        defer { wi_gif_encoder_destroy(encoder) }
        // One frame at a time: an animation decoded on demand holds one canvas, not every frame.
        for index in 0..<image.frameCount {
            if Task.isCancelled { throw CancellationError() }
            let frame = try image.frame(at: index)
            let delay = UInt32(max(0, (frame.duration * 100).rounded()))
            let status = frame.bitmap.converted(to: .rgba8).withUnsafeBytes { raw in
                wi_gif_encoder_add(encoder, raw.bindMemory(to: UInt8.self).baseAddress, delay)
            }
            guard status == WI_OK else { throw ImageError.encodingFailed(.gif, reason: "a frame could not be quantised") }
        }
        var buffer = wi_buffer()
        guard wi_gif_encoder_finish(encoder, &buffer) == WI_OK else {
            free(buffer.data)
            throw ImageError.encodingFailed(.gif, reason: "giflib could not write the file")
        }
        return CodecBridge.takeData(&buffer)
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        GIFIncrementalDecoder(options: options)
    }
}

/// Shows a GIF while it downloads: each preview holds the frames that arrived complete, and
/// is made only when a new frame completed since the last one.
final class GIFIncrementalDecoder: AccumulatingDecoder, IncrementalImageDecoder {
    private var frames = GIFFrameCounter()
    private var framesShown = 0

    func append(_ chunk: Data) throws {
        data.append(chunk)
        if data.count >= 10, data.count - chunk.count < 10, let (w, h) = GIFCoder.screenSize(data), w * h > options.pixelLimit {
            throw ImageError.tooLarge(width: w, height: h, limit: options.pixelLimit)
        }
    }

    func preview() throws -> PartialImage? {
        guard hasNewData else { return nil }
        previewedCount = data.count
        frames.advance(in: data)
        guard frames.completeFrames > framesShown else { return nil }
        framesShown = frames.completeFrames
        guard let image = try? GIFCoder.decode(data, options: options, tolerateTruncation: true) else { return nil }
        return PartialImage(image: image, rowsDecoded: image.height, scans: 0)
    }

    func finish() throws -> Image {
        try GIFCoder().decode(data, options: options)
    }
}

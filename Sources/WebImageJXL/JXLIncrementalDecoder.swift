import CWebImageJXL
import Foundation
import WebImage

/// Feeds libjxl as bytes arrive: a still image's passes show as previews (each byte decoded
/// once; only the bytes libjxl has not consumed are kept) and its final pixels come from the
/// decoder's state. An animation is kept whole and decoded whole once every byte is in.
final class JXLIncrementalDecoder: IncrementalImageDecoder {
    private let stream: OpaquePointer?
    private let options: ImageDecodingOptions
    /// The bytes until the header was read (an animation keeps them all, in `whole`).
    private var header = Data()
    private var whole: Data?
    private var info: wi_jxl_info?
    private var isComplete = false
    private var receivedSincePreview = false

    /// The bytes of the file this decoder keeps (tests check it is not the body of a still image).
    var keptByteCount: Int { header.count + (whole?.count ?? 0) + (stream.map { wi_jxl_stream_pending($0) } ?? 0) }

    init(options: ImageDecodingOptions) {
        self.options = options
        stream = wi_jxl_stream_create(CodecBridge.pixelLimit(options))
    }

    deinit { wi_jxl_stream_destroy(stream) }

    func append(_ chunk: Data) throws {
        receivedSincePreview = true
        if whole != nil {
            whole!.append(chunk)
            return
        }
        guard let stream else { throw ImageError.undecodable(.jxl, reason: "out of memory") }
        if info == nil { header.append(chunk) }
        let status = chunk.withBytePointer { wi_jxl_stream_append(stream, $0, $1) }
        switch status {
        case Int32(WI_HEADER):
            readHeader(stream)
        case Int32(WI_OK):
            // The header and the whole first frame may arrive in one piece (a small file read
            // at once): the stream then says only that it is done.
            if info == nil { readHeader(stream) }
            isComplete = whole == nil
        case Int32(WI_NEED_MORE): break
        default:
            throw CodecBridge.error(status, format: .jxl, message: String(cString: wi_jxl_stream_message(stream)),
                                    limit: options.pixelLimit)
        }
    }

    /// Takes the header the stream read: an animation keeps every byte from here on.
    private func readHeader(_ stream: OpaquePointer) {
        var found = wi_jxl_info()
        _ = wi_jxl_stream_header(stream, &found)
        info = found
        if found.has_animation != 0 { whole = header }
        header = Data()
    }

    /// The passes decoded so far; nil when no new pass arrived, and once the image is complete.
    func preview() throws -> PartialImage? {
        guard receivedSincePreview, !isComplete else { return nil }
        receivedSincePreview = false
        if let whole {
            guard let image = try? JXLCoder().decode(whole, options: options) else { return nil }
            return PartialImage(image: image, rowsDecoded: image.height, scans: 0)
        }
        guard let stream, let info else { return nil }
        var out = wi_image()
        guard wi_jxl_stream_render(stream, 0, &out) == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else { return nil }
        let finishing = DecodeFinishing(width: Int(info.width), height: Int(info.height), exifOrientation: nil, options: options)
        var image = Image(bitmap: finishing(bitmap), format: .jxl, scale: options.scale)
        image.applyColor(colorInfo(stream), options: options)
        return PartialImage(image: image, rowsDecoded: image.height, scans: 0)
    }

    func finish() throws -> Image {
        if let whole { return try JXLCoder().decode(whole, options: options) }
        guard let stream, let info else {
            throw ImageError.undecodable(.jxl, reason: header.isEmpty ? "no data" : "the data is truncated")
        }
        var out = wi_image()
        let status = wi_jxl_stream_render(stream, 1, &out)
        guard status == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else {
            throw CodecBridge.error(status, format: .jxl, message: CodecBridge.message(out.message), limit: options.pixelLimit)
        }
        let finishing = DecodeFinishing(width: Int(info.width), height: Int(info.height), exifOrientation: nil, options: options)
        let frame = ImageFrame(bitmap: finishing(bitmap))
        var image = Image(firstFrame: frame, frames: .preloaded([frame]), format: .jxl, loopCount: nil, scale: options.scale,
                          exifOrientation: nil, orientationApplied: false)
        image.applyColor(colorInfo(stream), options: options)
        return image
    }

    /// The colour description the stream read (the header's, with its code points, and the
    /// decoded pixels' profile).
    private func colorInfo(_ stream: OpaquePointer) -> ImageColorInfo {
        var header = wi_jxl_info()
        guard wi_jxl_stream_header(stream, &header) == WI_OK else { return ImageColorInfo() }
        var bytes: UnsafePointer<UInt8>?
        let length = wi_jxl_stream_icc(stream, &bytes)
        return JXLCoder.colorInfo(icc: length > 0 ? bytes.map { Data(bytes: $0, count: length) } : nil, header)
    }
}

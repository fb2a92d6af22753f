import CWebImageCodecs
import Foundation

/// WebP through libwebp: lossy, lossless, alpha, and animation (libwebpdemux composites
/// frames with their blend and dispose methods). With `maxPixelSize` a still image is decoded
/// directly at the smaller size by libwebp's scaler.
public struct WebPCoder: ImageCoder {
    /// The WebP coder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .webp }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        CodecBridge.wholeFileDecodes?.count.add(1, ordering: .relaxed)
        var info = wi_webp_info()
        let status = data.withBytePointer { wi_webp_read_info($0, $1, &info) }
        guard status == WI_OK else {
            throw CodecBridge.error(status, format: .webp, message: CodecBridge.message(info.message), limit: options.pixelLimit)
        }
        let width = Int(info.width), height = Int(info.height)
        guard width > 0, height > 0 else { throw ImageError.undecodable(.webp, reason: "zero image dimension") }
        guard !options.exceedsPixelLimit(width: width, height: height) else {
            throw ImageError.tooLarge(width: width, height: height, limit: options.pixelLimit)
        }
        // EXIF's orientation, else the XMP packet's.
        let orientation = WebPCoder.chunk("EXIF", in: data).flatMap { ExifReader.orientation(tiff: $0) }
            ?? WebPCoder.chunk("XMP ", in: data).flatMap { XMPReader.orientation($0) }
        let finishing = DecodeFinishing(width: width, height: height, exifOrientation: orientation, options: options)
        let colorInfo = ImageColorInfo(iccProfile: WebPCoder.chunk("ICCP", in: data).map { Data($0) })
        if info.has_animation != 0 {
            var image = try decodeAnimation(data, options: options, finishing: finishing, orientation: orientation,
                                            loopCount: Int(info.loop_count))
            image.applyColor(colorInfo, options: options)
            return image
        }
        let target = options.targetSize(width: width, height: height, exifOrientation: orientation)
        var out = wi_image()
        let decodeStatus = data.withBytePointer {
            wi_webp_decode($0, $1, UInt32(target.width), UInt32(target.height), CodecBridge.pixelLimit(options), &out)
        }
        guard decodeStatus == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else {
            throw CodecBridge.error(decodeStatus, format: .webp, message: CodecBridge.message(out.message),
                                    width: info.width, height: info.height, limit: options.pixelLimit)
        }
        let frame = ImageFrame(bitmap: finishing(bitmap))
        var image = Image(firstFrame: frame, frames: .preloaded([frame]), format: .webp, loopCount: nil, scale: options.scale,
                          exifOrientation: orientation, orientationApplied: finishing.orientation != nil)
        image.applyColor(colorInfo, options: options)
        return image
    }

    private func decodeAnimation(_ data: Data, options: ImageDecodingOptions, finishing: DecodeFinishing,
                                 orientation: Int?, loopCount: Int) throws -> Image {
        var status: Int32 = 0
        var message = wi_image().message
        let handle = withUnsafeMutableBytes(of: &message) { buffer in
            data.withBytePointer { wi_webp_anim_create($0, $1, CodecBridge.pixelLimit(options), &status,
                                                       buffer.bindMemory(to: CChar.self).baseAddress) }
        }
        guard let handle else {
            throw CodecBridge.error(status, format: .webp, message: CodecBridge.message(message), limit: options.pixelLimit)
        }
        let renderer = CodecFrameRenderer(handle: handle, format: .webp, render: { wi_webp_anim_render($0, $1, $2) },
                                          close: { wi_webp_anim_destroy($0) })
        let count = options.firstFrameOnly ? 1 : Int(wi_webp_anim_frame_count(handle))
        let durations = (0..<count).map { Double(wi_webp_anim_frame_duration(handle, UInt32($0))) / 1000 }
        return try AnimationAssembly.image(renderer: renderer, durations: durations, format: .webp, loopCount: loopCount,
                                           finishing: finishing, orientation: orientation, options: options)
    }

    public func canEncode(_ format: ImageFormat) -> Bool { format == .webp }

    /// The body of the first chunk named `fourcc` in an extended WebP container, if any.
    static func chunk(_ fourcc: String, in data: Data) -> Data? {
        var offset = 0, length = 0
        guard data.withBytePointer({ wi_webp_chunk($0, $1, fourcc, &offset, &length) }) == WI_OK,
              offset + length <= data.count else { return nil }
        return data[(data.startIndex + offset)..<(data.startIndex + offset + length)]
    }

    /// The largest width or height the WebP format can hold (libwebp's `WEBP_MAX_DIMENSION`).
    public static let maximumDimension = 16383

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        guard format == .webp else { throw ImageError.encodingFailed(format, reason: "the WebP coder writes WebP only") }
        guard image.width <= WebPCoder.maximumDimension, image.height <= WebPCoder.maximumDimension else {
            throw ImageError.encodingFailed(.webp, reason: "WebP holds at most \(WebPCoder.maximumDimension) pixels a side, "
                                            + "and the image is \(image.width)x\(image.height)")
        }
        let quality = Float(max(0, min(1, options.quality)) * 100)
        var buffer = wi_buffer()
        if image.isAnimated {
            guard let encoder = wi_webp_anim_encoder_create(UInt32(image.width), UInt32(image.height), UInt32(image.loopCount ?? 0)) else {
                throw ImageError.encodingFailed(.webp, reason: "the canvas is too large for WebP")
            }
            defer { wi_webp_anim_encoder_destroy(encoder) }
            // One frame at a time: an animation decoded on demand holds one canvas, not every frame.
            for index in 0..<image.frameCount {
                if Task.isCancelled { throw CancellationError() }
                let frame = try image.frame(at: index)
                let status = frame.bitmap.converted(to: .rgba8).withUnsafeBytes { raw in
                    wi_webp_anim_encoder_add(encoder, raw.bindMemory(to: UInt8.self).baseAddress,
                                             UInt32(max(0, (frame.duration * 1000).rounded())), quality, options.lossless ? 1 : 0)
                }
                guard status == WI_OK else { throw ImageError.encodingFailed(.webp, reason: "a frame could not be encoded") }
            }
            guard CodecBridge.withProfile(of: image, { wi_webp_anim_encoder_finish(encoder, $0, $1, &buffer) }) == WI_OK else {
                free(buffer.data)
                throw ImageError.encodingFailed(.webp, reason: CodecBridge.message(buffer.message))
            }
            let encoded = CodecBridge.takeData(&buffer)
            return try options.metadata.map { try $0.embedded(in: encoded, format: .webp, image: image) } ?? encoded
        }
        let lossless: Int32 = options.lossless ? 1 : 0
        let encoded = try CodecBridge.withProfile(of: image) { icc, length in
            try CodecBridge.encodeStill(.webp, image.bitmap) { wi_webp_encode($0, $1, $2, quality, lossless, icc, length, $3) }
        }
        return try options.metadata.map { try $0.embedded(in: encoded, format: .webp, image: image) } ?? encoded
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        WebPIncrementalDecoder(options: options)
    }
}

/// Feeds libwebp's incremental decoder (`WebPIDecoder`) as bytes arrive; a still image's final
/// pixels come from its state, not from a second decode, and only the file's metadata chunks are
/// kept (EXIF and XMP, which may follow the image data), not the body. Animated WebP has no
/// incremental path in libwebp: it is kept whole, its previews start once the whole file is
/// there, and it is decoded whole.
final class WebPIncrementalDecoder: IncrementalImageDecoder {
    private let decoder = wi_webp_incremental_create()
    private let options: ImageDecodingOptions
    private var skeleton = ChunkSkeleton(.riff, dropping: ["VP8 ", "VP8L", "ALPH"], animation: ["ANIM", "ANMF"])
    private var received = 0, previewedCount = 0
    /// The size and animation flag, read from the first 30 bytes.
    private var info: wi_webp_info?
    private var unsupported = false
    /// libwebp has every row of a still image.
    private var complete = false
    /// Rows the last preview showed: a preview shows new rows or none.
    private var shownRows: UInt32 = 0
    /// The file's length from its RIFF header: a file decoded whole (an animation) is not tried
    /// before it is all there.
    private var fileLength = Int.max

    /// The bytes kept: the whole file for an animation, else the metadata chunks.
    private var data: Data { skeleton.bytes }
    /// How many bytes of the file this decoder holds (tests check it is not the body).
    var keptByteCount: Int { data.count + header.count }

    init(options: ImageDecodingOptions) { self.options = options }

    deinit { wi_webp_incremental_destroy(decoder) }

    func append(_ chunk: Data) throws {
        received += chunk.count
        skeleton.add(chunk)
        guard info != nil else {
            // libwebp allocates the whole image as soon as it has read a size (a bare VP8L
            // bitstream states one in its first 5 bytes): it is handed no byte before the size
            // is checked against the pixel limit.
            header.append(chunk)
            if header.count >= 30 { try readHeader() }
            return
        }
        try feed(chunk)
    }

    /// Hands `bytes` to libwebp.
    private func feed(_ bytes: Data) throws {
        guard let decoder, !unsupported else { return }
        let status = bytes.withBytePointer { wi_webp_incremental_append(decoder, $0, $1) }
        if status == WI_OK { complete = true }
        if status == WI_ERR_UNSUPPORTED { unsupported = true }
        else if status < 0 { throw ImageError.undecodable(.webp, reason: "corrupt WebP data") }
    }

    /// The first bytes, until the header was read.
    private var header = Data()

    /// Checks the size in the bytes held, then hands them to libwebp.
    private func readHeader() throws {
        let held = header
        try readInfo()
        try feed(held)
    }

    /// Reads the size and the animation flag from the first bytes.
    private func readInfo() throws {
        var found = wi_webp_info()
        _ = header.withBytePointer { wi_webp_read_info($0, $1, &found) }
        if header.count >= 8 {
            let start = header.startIndex
            fileLength = 8 + header[start + 4..<start + 8].reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        info = found
        header = Data()
        // libwebp would also read a bare VP8 or VP8L bitstream (no RIFF container, so no size
        // here) and allocate whatever size it states: only a container's size is let through.
        guard found.width > 0, found.height > 0 else { throw ImageError.undecodable(.webp, reason: "not a WebP container") }
        if options.exceedsPixelLimit(width: Int(found.width), height: Int(found.height)) {
            throw ImageError.tooLarge(width: Int(found.width), height: Int(found.height), limit: options.pixelLimit)
        }
        if found.has_animation != 0 { unsupported = true }
    }

    func preview() throws -> PartialImage? {
        guard let decoder, received != previewedCount, !complete else { return nil }
        previewedCount = received
        if unsupported {
            guard received >= fileLength, let image = try? WebPCoder().decode(data, options: options) else { return nil }
            return PartialImage(image: image, rowsDecoded: image.height, scans: 0)
        }
        let decodedRows = wi_webp_incremental_rows(decoder)
        guard decodedRows > shownRows else { return nil }
        shownRows = decodedRows
        var out = wi_image()
        guard wi_webp_incremental_snapshot(decoder, &out) == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else { return nil }
        let finishing = DecodeFinishing(width: bitmap.width, height: bitmap.height, exifOrientation: nil, options: options)
        var image = Image(bitmap: finishing(bitmap), format: .webp, scale: options.scale)
        image.applyColor(ImageColorInfo(iccProfile: WebPCoder.chunk("ICCP", in: data).map { Data($0) }), options: options)
        let rows = Int((Double(out.rows_decoded) / Double(bitmap.height) * Double(image.height)).rounded())
        return PartialImage(image: image, rowsDecoded: rows, scans: 0)
    }

    func finish() throws -> Image {
        if info == nil { try readHeader() }   // a file under 30 bytes
        if let image = fromDecoderState() { return image }
        // An animation is kept whole; a still image that libwebp did not finish is truncated.
        guard unsupported || skeleton.isAnimation else { throw ImageError.undecodable(.webp, reason: "the data is truncated") }
        return try WebPCoder().decode(data, options: options)
    }

    /// The complete still image from libwebp's state, at full size: its pixels are libwebp's
    /// output, copied once.
    private func fromDecoderState() -> Image? {
        guard complete, !unsupported, let decoder, let info, info.has_animation == 0 else { return nil }
        let width = Int(info.width), height = Int(info.height)
        var out = wi_image()
        guard wi_webp_incremental_snapshot(decoder, &out) == WI_OK, out.rows_decoded == out.height,
              let bitmap = CodecBridge.takeBitmap(&out) else { return nil }
        let orientation = skeleton.riffChunk("EXIF").flatMap { ExifReader.orientation(tiff: $0) }
            ?? skeleton.riffChunk("XMP ").flatMap { XMPReader.orientation($0) }
        let finishing = DecodeFinishing(width: width, height: height, exifOrientation: orientation, options: options)
        let frame = ImageFrame(bitmap: finishing(bitmap))
        var image = Image(firstFrame: frame, frames: .preloaded([frame]), format: .webp, loopCount: nil, scale: options.scale,
                          exifOrientation: orientation, orientationApplied: finishing.orientation != nil)
        image.applyColor(ImageColorInfo(iccProfile: skeleton.riffChunk("ICCP").map { Data($0) }), options: options)
        return image
    }
}

import CWebImageCodecs
import Foundation

/// PNG and APNG through libpng: every bit depth and colour type, palettes with tRNS, 16-bit
/// reduced to 8-bit (high byte) or kept (`ImageDecodingOptions.bitDepth`; a 16-bit bitmap is
/// written as a 16-bit PNG), Adam7 interlacing, gamma ignored as browsers do, and APNG
/// animation (acTL/fcTL/fdAT with dispose and blend ops) composited into full frames.
public struct PNGCoder: ImageCoder {
    /// The PNG coder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .png }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        CodecBridge.wholeFileDecodes?.count.add(1, ordering: .relaxed)
        let chunks = PNGChunks(data)
        try PNGCoder.checkLimit(chunks.headerSize(in: data), options)
        let orientation = chunks.orientation(in: data)
        let colorInfo = chunks.colorInfo(in: data)
        if !options.firstFrameOnly, let animation = try APNGAnimation(data: data, chunks: chunks, options: options) {
            do {
                var image = try animation.image(exifOrientation: orientation)
                image.applyColor(colorInfo, options: options)
                return image
            } catch ImageError.tooLarge(let width, let height, let limit) {
                throw ImageError.tooLarge(width: width, height: height, limit: limit)
            } catch {
                // The first animation frame does not decode: show the default image, as browsers do.
            }
        }
        // An HDR image (cICP) is decoded at its depth: tone-mapped from it, or kept.
        let hdr = HDRDecoding(colorInfo, options: options)
        var depth = options
        if hdr.decodesDeep { depth.bitDepth = .source }
        // Decoded at size while libpng inflates it where the result is the same (an image to
        // tone-map is mapped before it is reduced, so it is decoded whole).
        let stored = chunks.headerSize(in: data)
        let reduced = stored.flatMap { stored in
            hdr.toneMapper == nil
                ? DecodeFinishing(width: stored.width, height: stored.height, exifOrientation: orientation, options: options).reducedSize
                : nil
        }
        let bitmap = try PNGCoder.decodeStill(data, options: depth, reducingTo: reduced)
        // Finishing as for the stored size; a bitmap already reduced is only turned upright.
        var finishing = DecodeFinishing(width: stored?.width ?? bitmap.width, height: stored?.height ?? bitmap.height,
                                        exifOrientation: orientation, options: options)
        let toneMapped = finishing.mapTones(hdr, options: options)
        let frame = ImageFrame(bitmap: finishing(bitmap))
        var image = Image(firstFrame: frame, frames: .preloaded([frame]),
                          format: .png, loopCount: nil, scale: options.scale, exifOrientation: orientation,
                          orientationApplied: finishing.orientation != nil)
        image.applyColor(colorInfo, options: options, toneMapped: toneMapped)
        return image
    }

    /// Throws `tooLarge` when the IHDR size is over the pixel limit (before libpng sees the data).
    static func checkLimit(_ size: (width: Int, height: Int)?, _ options: ImageDecodingOptions) throws {
        if let size, options.exceedsPixelLimit(width: size.width, height: size.height) {
            throw ImageError.tooLarge(width: size.width, height: size.height, limit: options.pixelLimit)
        }
    }

    /// Decodes the (default) image of a PNG stream into stored pixels; with `reducingTo`, an
    /// opaque 8-bit image that is not interlaced comes out at that size instead, its rows
    /// reduced by area averaging as they are inflated (`wi_png_decoder_reduce_to`).
    static func decodeStill(_ data: Data, options: ImageDecodingOptions,
                            reducingTo reduced: (width: Int, height: Int)? = nil) throws -> Bitmap {
        guard let decoder = wi_png_decoder_create(CodecBridge.pixelLimit(options)) else {
            throw ImageError.undecodable(.png, reason: "out of memory")
        }
        defer { wi_png_decoder_destroy(decoder) }
        if options.bitDepth == .source { wi_png_decoder_keep_16(decoder) }
        if let reduced { wi_png_decoder_reduce_to(decoder, UInt32(reduced.width), UInt32(reduced.height)) }
        let status = data.withBytePointer { wi_png_decoder_push(decoder, $0, $1) }
        // A stream whose rows are all there but whose IEND is missing displays in browsers.
        guard status == WI_OK || (status == WI_NEED_MORE && wi_png_decoder_rows_complete(decoder) != 0) else {
            var w: UInt32 = 0, h: UInt32 = 0, interlaced: Int32 = 0
            wi_png_decoder_size(decoder, &w, &h, &interlaced)
            let message = String(cString: wi_png_decoder_message(decoder))
            throw CodecBridge.error(status, format: .png, message: message, width: w, height: h, limit: options.pixelLimit)
        }
        var out = wi_image()
        guard wi_png_decoder_take(decoder, &out) == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else {
            throw ImageError.undecodable(.png, reason: "the data is truncated")
        }
        return bitmap
    }

    public func canEncode(_ format: ImageFormat) -> Bool { format == .png }

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        guard format == .png else { throw ImageError.encodingFailed(format, reason: "the PNG coder writes PNG only") }
        // An animation is written as APNG: frames, durations and loop count kept.
        if image.isAnimated {
            let encoded = try APNGEncoder.encode(image)
            return try options.metadata.map { try $0.embedded(in: encoded, format: .png, image: image) } ?? encoded
        }
        let alpha: Int32 = image.bitmap.hasTransparency ? 1 : 0
        // Below half effort, rows are not filtered (libvips's and sharp's default) and libdeflate
        // compresses them in one call: less work to write, larger files; by default libpng picks
        // a filter for each row and zlib compresses them.
        let adaptive: Int32 = (options.effort ?? 1) < 0.5 ? 0 : 1
        let encoded = try CodecBridge.withProfile(of: image) { icc, length in
            if image.bitmap.pixelFormat == .rgba16 {
                // A deep bitmap is written at its depth: a 16-bit PNG.
                return try CodecBridge.encodeDeep(.png, image.bitmap) { wi_png_encode_16($0, $1, $2, alpha, 6, adaptive, icc, length, $3) }
            }
            return try CodecBridge.encodeStill(.png, image.bitmap) { wi_png_encode($0, $1, $2, alpha, 6, adaptive, icc, length, $3) }
        }
        let described = image.colorInfo.hdrCICP.map { PNGCoder.inserting(cicp: $0, into: encoded) } ?? encoded
        return try options.metadata.map { try $0.embedded(in: described, format: .png, image: image) } ?? described
    }

    /// `png` with a cICP chunk (PNG's third edition) after its IHDR: the code points of an HDR
    /// image kept as HDR (RGB samples, full range).
    static func inserting(cicp: ImageColorInfo.CICP, into png: Data) -> Data {
        let headerEnd = 8 + 4 + 4 + 13 + 4
        guard png.count > headerEnd else { return png }
        let body = [UInt8(clamping: cicp.colorPrimaries), UInt8(clamping: cicp.transferCharacteristics), 0, 1]
        var result = Data(png.prefix(headerEnd))
        result.append(APNGEncoder.chunk("cICP", body))
        result.append(png.dropFirst(headerEnd))
        return result
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        PNGIncrementalDecoder(options: options)
    }
}

/// Feeds libpng's progressive reader as bytes arrive: plain PNGs fill row by row, interlaced
/// ones pass by pass. A still image's final pixels are the reader's own buffer (no second
/// decode); the bytes are kept for the orientation chunks and for APNG, whose frames are
/// composited from the whole file.
final class PNGIncrementalDecoder: IncrementalImageDecoder {
    private let decoder: OpaquePointer?
    private let options: ImageDecodingOptions
    private var failure: ImageError?
    /// The file without its IDAT payloads (libpng has decoded them): the chunks that give its
    /// size and orientation. An APNG (acTL comes before the first IDAT) is kept whole.
    private var skeleton = ChunkSkeleton(.png, dropping: ["IDAT"], animation: ["acTL"])
    private var received = 0, previewedCount = 0
    /// Whether the file is an APNG: known once the first IDAT arrived (acTL must come before
    /// it); until then, and for a still PNG after, previews skip the chunk walk.
    private var isAnimation: Bool?
    /// The progress (pass and rows) the last preview showed: a preview shows new rows or none.
    private var shownProgress: UInt64 = 0
    /// An APNG's chunk headers walked so far (it is kept whole): the offset of the next chunk
    /// (the end of the complete chunks), whether the default image's IDAT went by, whether a
    /// chunk followed the last IDAT, whether the IEND was reached, and how many fcTL or IEND
    /// chunks followed the IDAT complete (each closes a frame). A preview decodes only when that
    /// count grew.
    private var walked = 8, walkedPastIDAT = false, chunkAfterIDAT = false, walkedToIEND = false
    private var framesClosed = 0, framesShown = 0

    /// The bytes kept: the whole file for an APNG, else its skeleton.
    private var data: Data { skeleton.bytes }
    /// How many bytes of the file this decoder holds (tests check it is not the body).
    var keptByteCount: Int { data.count }

    init(options: ImageDecodingOptions) {
        decoder = wi_png_decoder_create(CodecBridge.pixelLimit(options))
        if options.bitDepth == .source, let decoder { wi_png_decoder_keep_16(decoder) }
        self.options = options
    }

    deinit { wi_png_decoder_destroy(decoder) }

    func append(_ chunk: Data) throws {
        if let failure { throw failure }
        let before = data.count
        skeleton.add(chunk)
        received += chunk.count
        if before < 33, data.count >= 33 {
            do { try PNGCoder.checkLimit(PNGChunks(data.prefix(33)).headerSize(in: data), options) } catch {
                failure = error as? ImageError
                throw error
            }
        }
        guard let decoder else { throw ImageError.undecodable(.png, reason: "out of memory") }
        let status = chunk.withBytePointer { wi_png_decoder_push(decoder, $0, $1) }
        if status < 0 {
            var w: UInt32 = 0, h: UInt32 = 0, interlaced: Int32 = 0
            wi_png_decoder_size(decoder, &w, &h, &interlaced)
            let error = CodecBridge.error(status, format: .png, message: String(cString: wi_png_decoder_message(decoder)),
                                          width: w, height: h, limit: options.pixelLimit)
            failure = error
            throw error
        }
    }

    func preview() throws -> PartialImage? {
        if let failure { throw failure }
        guard let decoder, received != previewedCount else { return nil }
        previewedCount = received
        if let animation = animationPreview() { return animation }
        // Every row is in: the final image follows, and a preview would be the same.
        if wi_png_decoder_rows_complete(decoder) != 0 { return nil }
        // No new row (or nothing decoded yet, only the header): no preview, not the same one again.
        let progress = wi_png_decoder_progress(decoder)
        guard progress != shownProgress else { return nil }
        shownProgress = progress
        var out = wi_image()
        guard wi_png_decoder_snapshot(decoder, &out) == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else { return nil }
        // Nothing decoded yet (only the header arrived): no preview, rather than an empty one.
        guard out.rows_decoded > 0 else { return nil }
        let finishing = DecodeFinishing(width: bitmap.width, height: bitmap.height, exifOrientation: nil, options: options)
        var image = Image(bitmap: finishing(bitmap), format: .png, scale: options.scale)
        image.applyColor(PNGChunks(data).colorInfo(in: data), options: options)
        return PartialImage(image: image, rowsDecoded: Int(out.rows_decoded), scans: Int(out.scans))
    }

    func finish() throws -> Image {
        if let failure { throw failure }
        if let image = fromDecoderState() { return image }
        // Without its image data, a still PNG whose rows are not all in is a truncated one.
        guard skeleton.isAnimation else { throw ImageError.undecodable(.png, reason: "the data is truncated") }
        return try PNGCoder().decode(data, options: options)
    }

    /// The still image from libpng's buffer once every row is in (an APNG animation is decoded
    /// whole: its frames are composited from the whole file).
    private func fromDecoderState() -> Image? {
        guard let decoder, wi_png_decoder_rows_complete(decoder) != 0 else { return nil }
        if !options.firstFrameOnly, skeleton.isAnimation { return nil }
        let chunks = PNGChunks(data)
        var out = wi_image()
        guard wi_png_decoder_take(decoder, &out) == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else { return nil }
        let orientation = chunks.orientation(in: data)
        let finishing = DecodeFinishing(width: bitmap.width, height: bitmap.height, exifOrientation: orientation, options: options)
        let frame = ImageFrame(bitmap: finishing(bitmap))
        var image = Image(firstFrame: frame, frames: .preloaded([frame]), format: .png, loopCount: nil, scale: options.scale,
                          exifOrientation: orientation, orientationApplied: finishing.orientation != nil)
        image.applyColor(chunks.colorInfo(in: data), options: options)
        return image
    }

    /// An APNG whose default image has fully arrived previews as an animation of the frames
    /// received so far (as GIF previews do): the complete chunks, closed with an IEND, decoded;
    /// a frame still arriving is left out. nil before that, when no frame was closed (by the
    /// next fcTL or the IEND) since the last preview, or for a still PNG.
    private func animationPreview() -> PartialImage? {
        if isAnimation == false { return nil }
        if isAnimation == nil {
            let chunks = PNGChunks(data).chunks
            guard chunks.contains(where: { $0.type == "IDAT" }) else { return nil }
            isAnimation = chunks.contains { $0.type == "acTL" }
        }
        guard isAnimation == true else { return nil }
        walkChunkHeaders()
        guard framesClosed > framesShown else { return nil }
        framesShown = framesClosed
        // The walk knows where the complete chunks end: no second walk (with CRCs) per preview.
        guard chunkAfterIDAT else { return nil }
        var complete = data.prefix(walked)
        if !walkedToIEND { complete.append(APNGEncoder.chunk("IEND", [])) }
        guard let image = try? PNGCoder().decode(complete, options: options) else { return nil }
        return PartialImage(image: image, rowsDecoded: image.height, scans: 0)
    }

    /// Reads the headers of the chunks that arrived complete since the last call (an APNG is
    /// kept whole, so offsets are the file's); each is read once.
    private func walkChunkHeaders() {
        let bytes = data
        while !walkedToIEND, walked <= bytes.count - 12 {
            let length = Int(bytes.bigEndianUInt32(at: walked))
            guard length <= bytes.count - walked - 12 else { return }
            let start = bytes.startIndex + walked
            let type = bytes[start + 4..<start + 8]
            let isIEND = type.elementsEqual("IEND".utf8)
            if type.elementsEqual("IDAT".utf8) {
                walkedPastIDAT = true
                chunkAfterIDAT = false
            } else if walkedPastIDAT {
                chunkAfterIDAT = true
                if isIEND || type.elementsEqual("fcTL".utf8) { framesClosed += 1 }
            }
            walked += 12 + length
            walkedToIEND = isIEND
        }
    }
}

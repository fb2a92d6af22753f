import CWebImageCodecs
import Foundation

/// JPEG through libjpeg-turbo: baseline, progressive, grayscale, CMYK and YCCK (Adobe-inverted
/// data recognised by its APP14 marker), every subsampling, restart markers. EXIF orientation
/// is applied to the pixels unless the options keep it raw. With `maxPixelSize` the decoder
/// uses libjpeg's DCT scaling (down to 1/8) so the full-size image is never held.
public struct JPEGCoder: ImageCoder {
    /// The JPEG coder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .jpeg }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        let (bitmap, orientation, finishing, _, colorInfo) = try JPEGCoder.decode(data, options: options, tolerateTruncation: false)
        let frame = ImageFrame(bitmap: finishing(bitmap))
        var image = Image(firstFrame: frame, frames: .preloaded([frame]), format: .jpeg, loopCount: nil, scale: options.scale,
                          exifOrientation: orientation, orientationApplied: finishing.orientation != nil)
        image.applyColor(colorInfo, options: options)
        return image
    }

    /// Decodes to stored pixels at the DCT scale that `options.maxPixelSize` allows, with the
    /// colour description left to apply: a CMYK image with a CMYK profile is converted to sRGB
    /// here through that profile (from its inks, not the naive formula) when `options` ask for
    /// sRGB, and then has none left.
    static func decode(_ data: Data, options: ImageDecodingOptions, tolerateTruncation: Bool) throws
        -> (Bitmap, Int?, DecodeFinishing, wi_image, ImageColorInfo) {
        CodecBridge.wholeFileDecodes?.count.add(1, ordering: .relaxed)
        if let size = JPEGSegments.frameSize(data), options.exceedsPixelLimit(width: size.width, height: size.height) {
            throw ImageError.tooLarge(width: size.width, height: size.height, limit: options.pixelLimit)
        }
        var info = wi_jpeg_info()
        let headerStatus = data.withBytePointer { wi_jpeg_read_info($0, $1, &info) }
        guard headerStatus == WI_OK else {
            throw CodecBridge.error(headerStatus, format: .jpeg, message: CodecBridge.message(info.message), limit: options.pixelLimit)
        }
        let width = Int(info.width), height = Int(info.height)
        guard width > 0, height > 0 else { throw ImageError.undecodable(.jpeg, reason: "zero image dimension") }
        guard !options.exceedsPixelLimit(width: width, height: height) else {
            throw ImageError.tooLarge(width: width, height: height, limit: options.pixelLimit)
        }
        let orientation = JPEGSegments.orientation(data)
        let scale = dctScale(width: width, height: height, options: options, exifOrientation: orientation)
        let colorInfo = ImageColorInfo(iccProfile: JPEGSegments.iccProfile(data))
        let isCMYK = info.color_space == 4 || info.color_space == 5   // JCS_CMYK, JCS_YCCK
        let transform = options.colorSpace == .sRGB ? ColorTransform.toSRGB(colorInfo) : nil
        let inks = isCMYK ? transform.flatMap { $0.readsCMYK ? $0 : nil } : nil
        let finishing = DecodeFinishing(width: width, height: height, exifOrientation: orientation, options: options)
        // Any other conversion runs on the rows as they are decoded (what `applyColor` would do
        // after the decode, overlapped with it), unless a downscale follows the decode: then
        // the fewer pixels it leaves are converted, after it, as the streaming decoder does.
        let decodedWidth = (width * Int(scale) + 7) / 8, decodedHeight = (height * Int(scale) + 7) / 8
        let downscales = finishing.downscales(width: decodedWidth, height: decodedHeight)
        let rows = downscales ? nil : transform.flatMap { $0.readsCMYK ? nil : $0 }
        // The downscale itself runs on the rows as libjpeg gives them (not for inks, which are
        // converted first); `finishing` then finds the bitmap at its size already.
        let reduced = downscales && inks == nil ? finishing.reducedSize : nil
        // Of those, only the rows a fill box keeps (`finishing` then cuts its columns); not for
        // a truncated file, whose real rows are counted over the whole image.
        let band = reduced != nil && !tolerateTruncation ? finishing.keptRows : nil
        var out = wi_image()
        let status = data.withBytePointer { bytes, count in
            ColorTransform.withOptionalPointer(rows) {
                wi_jpeg_decode(bytes, count, scale, UInt32(reduced?.width ?? 0), UInt32(reduced?.height ?? 0),
                               UInt32(band?.top ?? 0), UInt32(band?.count ?? 0), tolerateTruncation ? 1 : 0,
                               CodecBridge.pixelLimit(options), inks == nil ? 0 : 1, $0, &out)
            }
        }
        guard status == WI_OK, var bitmap = CodecBridge.takeBitmap(&out) else {
            throw CodecBridge.error(status, format: .jpeg, message: CodecBridge.message(out.message), width: info.width,
                                    height: info.height, limit: options.pixelLimit)
        }
        inks?.apply(to: &bitmap)
        return (bitmap, orientation, finishing, out, inks == nil && rows == nil ? colorInfo : ImageColorInfo())
    }

    /// The smallest DCT scale (n/8) that still covers the size `options` ask for, of 1/8, 2/8,
    /// 4/8 and 8/8: libjpeg-turbo's other scales have no SIMD inverse DCT, and decoding at 6/8 or
    /// 7/8 costs more than a full decode (Benchmarks/README.md, "Figures once in source comments").
    static func dctScale(width: Int, height: Int, options: ImageDecodingOptions, exifOrientation: Int? = nil) -> Int32 {
        let target = options.targetSize(width: width, height: height, exifOrientation: exifOrientation)
        guard target.width < width || target.height < height else { return 8 }
        return [1, 2, 4, 8].first { n in
            (width * n + 7) / 8 >= target.width && (height * n + 7) / 8 >= target.height
        }.map(Int32.init) ?? 8
    }

    public func canEncode(_ format: ImageFormat) -> Bool { format == .jpeg }

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        guard format == .jpeg else { throw ImageError.encodingFailed(format, reason: "the JPEG coder writes JPEG only") }
        let quality = Int32(max(1, min(100, (options.quality * 100).rounded())))
        let progressive: Int32 = options.progressive ? 1 : 0
        let encoded = try CodecBridge.withProfile(of: image) { icc, length in
            try CodecBridge.encodeStill(.jpeg, image.bitmap) { wi_jpeg_encode($0, $1, $2, quality, progressive, icc, length, $3) }
        }
        return try options.metadata.map { try $0.embedded(in: encoded, format: .jpeg, image: image) } ?? encoded
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        JPEGIncrementalDecoder(options: options)
    }
}

/// Decodes a JPEG as it downloads, each byte once (libjpeg's suspending source): rows of a
/// baseline image go straight into the final buffer; the scans of a progressive one go into
/// libjpeg's coefficient buffer, and a preview is one output pass over the last complete scan.
/// It keeps only the bytes libjpeg has not consumed (and the header, until it is parsed), not
/// the body; `finish()` returns the image from that state, without decoding again.
final class JPEGIncrementalDecoder: IncrementalImageDecoder {
    private let stream: OpaquePointer
    private let options: ImageDecodingOptions
    /// The bytes up to the end of the header, for the EXIF and XMP orientation.
    private var header = Data()
    private var finishing: DecodeFinishing?
    private var orientation: Int?
    /// The ICC profile of the header's APP2 segments.
    private var iccProfile: Data?
    private var size = (width: 0, height: 0)
    /// Every byte of the image arrived (the end of the file was read).
    private(set) var isComplete = false
    /// An arithmetic-coded file (libjpeg cannot suspend in one): its bytes, decoded whole.
    private var whole: Data?
    private var previewedCount = 0

    init?(options: ImageDecodingOptions) {
        guard let stream = wi_jpeg_stream_create(CodecBridge.pixelLimit(options)) else { return nil }
        self.stream = stream
        self.options = options
    }

    deinit { wi_jpeg_stream_destroy(stream) }

    func append(_ chunk: Data) throws {
        if whole != nil {
            whole!.append(chunk)
            return
        }
        if finishing == nil {
            header.append(chunk)
            // Fail as soon as the frame header says the image is over the limit, before libjpeg allocates.
            if let size = JPEGSegments.frameSize(header), options.exceedsPixelLimit(width: size.width, height: size.height) {
                throw ImageError.tooLarge(width: size.width, height: size.height, limit: options.pixelLimit)
            }
        }
        try handle(chunk.withBytePointer { wi_jpeg_stream_append(stream, $0, $1) })
    }

    private func handle(_ status: Int32) throws {
        var status = status
        if status == Int32(WI_HEADER) {
            var info = wi_jpeg_info()
            _ = wi_jpeg_stream_header(stream, &info)
            let (width, height) = (Int(info.width), Int(info.height))
            size = (width, height)
            orientation = JPEGSegments.orientation(header)
            iccProfile = JPEGSegments.iccProfile(header)
            finishing = DecodeFinishing(width: width, height: height, exifOrientation: orientation, options: options)
            status = wi_jpeg_stream_configure(stream, JPEGCoder.dctScale(width: width, height: height, options: options, exifOrientation: orientation))
            // CMYK converted through its profile needs the inks, which the stream does not keep:
            // such a file (rare, and never a photo from a camera) is decoded whole at the end.
            let isCMYK = info.color_space == 4 || info.color_space == 5   // JCS_CMYK, JCS_YCCK
            if isCMYK, options.colorSpace == .sRGB, ColorTransform.toSRGB(ImageColorInfo(iccProfile: iccProfile))?.readsCMYK == true {
                status = Int32(WI_ERR_UNSUPPORTED)
            }
            if status == Int32(WI_ERR_UNSUPPORTED) {
                // Every byte so far is in `header`: keep them, and the rest as it comes.
                whole = header
                header = Data()
                return
            }
            header = Data()
        }
        switch status {
        case Int32(WI_OK): isComplete = true
        case Int32(WI_NEED_MORE), Int32(WI_HEADER): break
        default:
            throw CodecBridge.error(status, format: .jpeg, message: String(cString: wi_jpeg_stream_message(stream)),
                                    width: UInt32(size.width), height: UInt32(size.height), limit: options.pixelLimit)
        }
    }

    /// The image so far; nil when nothing new arrived since the last preview, and once the
    /// whole image is in (the final image follows: a preview would be the same).
    func preview() throws -> PartialImage? {
        if let whole { return wholePreview(whole) }
        guard let finishing, !isComplete else { return nil }
        var out = wi_image()
        let status = wi_jpeg_stream_render(stream, 0, &out)
        guard status == Int32(WI_OK), let bitmap = CodecBridge.takeBitmap(&out) else {
            if status == Int32(WI_NEED_MORE) { return nil }
            throw CodecBridge.error(status, format: .jpeg, message: CodecBridge.message(out.message), limit: options.pixelLimit)
        }
        var image = Image(bitmap: finishing(bitmap), format: .jpeg, scale: options.scale)
        image.applyColor(ImageColorInfo(iccProfile: iccProfile), options: options)
        let rows = Int((Double(out.rows_decoded) / Double(bitmap.height) * Double(image.height)).rounded())
        return PartialImage(image: image, rowsDecoded: rows, scans: Int(out.scans))
    }

    /// A preview of an arithmetic-coded file: the bytes so far decoded as if the file ended there.
    private func wholePreview(_ data: Data) -> PartialImage? {
        guard data.count != previewedCount else { return nil }
        previewedCount = data.count
        guard let (bitmap, _, finishing, out, colorInfo) = try? JPEGCoder.decode(data, options: options, tolerateTruncation: true),
              out.rows_decoded > 0 || out.scans > 1 else { return nil }
        var image = Image(bitmap: finishing(bitmap), format: .jpeg, scale: options.scale)
        image.applyColor(colorInfo, options: options)
        let rows = Int((Double(out.rows_decoded) / Double(bitmap.height) * Double(image.height)).rounded())
        return PartialImage(image: image, rowsDecoded: rows, scans: Int(out.scans))
    }

    func finish() throws -> Image {
        if let whole { return try JPEGCoder().decode(whole, options: options) }
        var out = wi_image()
        let status = wi_jpeg_stream_render(stream, 1, &out)
        guard status == Int32(WI_OK), let finishing, let bitmap = CodecBridge.takeBitmap(&out) else {
            throw CodecBridge.error(status == Int32(WI_OK) ? Int32(WI_ERR_TRUNCATED) : status, format: .jpeg,
                                    message: CodecBridge.message(out.message), limit: options.pixelLimit)
        }
        let frame = ImageFrame(bitmap: finishing(bitmap))
        var image = Image(firstFrame: frame, frames: .preloaded([frame]), format: .jpeg, loopCount: nil, scale: options.scale,
                          exifOrientation: orientation, orientationApplied: finishing.orientation != nil)
        image.applyColor(ImageColorInfo(iccProfile: iccProfile), options: options)
        return image
    }
}

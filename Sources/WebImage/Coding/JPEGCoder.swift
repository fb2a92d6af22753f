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
        let (bitmap, orientation, finishing, _) = try JPEGCoder.decode(data, options: options, tolerateTruncation: false)
        let frame = ImageFrame(bitmap: finishing(bitmap))
        return Image(firstFrame: frame, frames: .preloaded([frame]), format: .jpeg, loopCount: nil, scale: options.scale,
                     exifOrientation: orientation, orientationApplied: finishing.orientation != nil)
    }

    /// Decodes to stored pixels at the DCT scale that `options.maxPixelSize` allows.
    static func decode(_ data: Data, options: ImageDecodingOptions, tolerateTruncation: Bool) throws
        -> (Bitmap, Int?, DecodeFinishing, wi_image) {
        if let size = JPEGSegments.frameSize(data), size.width * size.height > options.pixelLimit {
            throw ImageError.tooLarge(width: size.width, height: size.height, limit: options.pixelLimit)
        }
        var info = wi_jpeg_info()
        let headerStatus = data.withBytePointer { wi_jpeg_read_info($0, $1, &info) }
        guard headerStatus == WI_OK else {
            throw CodecBridge.error(headerStatus, format: .jpeg, message: CodecBridge.message(info.message), limit: options.pixelLimit)
        }
        let width = Int(info.width), height = Int(info.height)
        guard width > 0, height > 0 else { throw ImageError.undecodable(.jpeg, reason: "zero image dimension") }
        guard width * height <= options.pixelLimit else {
            throw ImageError.tooLarge(width: width, height: height, limit: options.pixelLimit)
        }
        let target = options.targetSize(width: width, height: height)
        var scale: Int32 = 8
        if target.width < width || target.height < height {
            scale = (1...8).first { n in
                (width * n + 7) / 8 >= target.width && (height * n + 7) / 8 >= target.height
            }.map(Int32.init) ?? 8
        }
        var out = wi_image()
        let status = data.withBytePointer {
            wi_jpeg_decode($0, $1, scale, tolerateTruncation ? 1 : 0, CodecBridge.pixelLimit(options), &out)
        }
        guard status == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else {
            throw CodecBridge.error(status, format: .jpeg, message: CodecBridge.message(out.message), width: info.width,
                                    height: info.height, limit: options.pixelLimit)
        }
        let orientation = JPEGSegments.orientation(data)
        let finishing = DecodeFinishing(width: width, height: height, exifOrientation: orientation, options: options)
        return (bitmap, orientation, finishing, out)
    }

    public func canEncode(_ format: ImageFormat) -> Bool { format == .jpeg }

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        guard format == .jpeg else { throw ImageError.encodingFailed(format, reason: "the JPEG coder writes JPEG only") }
        let quality = Int32(max(1, min(100, (options.quality * 100).rounded())))
        let progressive: Int32 = options.progressive ? 1 : 0
        return try CodecBridge.encodeStill(.jpeg, image.bitmap) { wi_jpeg_encode($0, $1, $2, quality, progressive, $3) }
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        JPEGIncrementalDecoder(options: options)
    }
}

/// Shows a JPEG while it downloads: each preview decodes the bytes so far as if the file ended
/// there (libjpeg's end-of-data handling), giving the rows received for a baseline image and
/// every scan received for a progressive one.
final class JPEGIncrementalDecoder: AccumulatingDecoder, IncrementalImageDecoder {
    private var headerChecked = false

    func append(_ chunk: Data) throws {
        data.append(chunk)
        // Fail as soon as the header says the image is over the limit.
        guard !headerChecked else { return }
        if let size = JPEGSegments.frameSize(data), size.width * size.height > options.pixelLimit {
            throw ImageError.tooLarge(width: size.width, height: size.height, limit: options.pixelLimit)
        }
        var info = wi_jpeg_info()
        guard data.withBytePointer({ wi_jpeg_read_info($0, $1, &info) }) == WI_OK else { return }
        headerChecked = true
    }

    func preview() throws -> PartialImage? {
        guard hasNewData, data.count > 2 else { return nil }
        previewedCount = data.count
        guard let (bitmap, _, finishing, out) = try? JPEGCoder.decode(data, options: options, tolerateTruncation: true),
              out.rows_decoded > 0 || out.scans > 1 else { return nil }
        let image = Image(bitmap: finishing(bitmap), format: .jpeg, scale: options.scale)
        let rows = Int((Double(out.rows_decoded) / Double(bitmap.height) * Double(image.height)).rounded())
        return PartialImage(image: image, rowsDecoded: rows, scans: Int(out.scans))
    }

    func finish() throws -> Image {
        try JPEGCoder().decode(data, options: options)
    }
}

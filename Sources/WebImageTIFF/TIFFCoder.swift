import CWebImageTIFF
import Foundation
import WebImage

/// TIFF through libtiff: the first page, in every photometric interpretation, bit depth and
/// compression libtiff's RGBA interface reads (bilevel, grey, palette, RGB, CMYK, YCbCr, LAB;
/// 1 to 16 bits; none, LZW, Deflate, PackBits, JPEG, CCITT fax), with its alpha un-premultiplied,
/// its Orientation tag applied as EXIF's is, and its ICC profile converted or kept as
/// `ImageDecodingOptions.colorSpace` says.
///
/// A multi-page TIFF is a document (scanned pages, faxes), not an animation: only the first
/// page is decoded, as browsers and image proxies show it, and the page count is not a frame
/// count. The page size is checked against the pixel limit before anything is allocated, and
/// no single allocation of libtiff's may exceed what that size needs. A page of 16-bit RGB, RGBA
/// or grey samples in strips keeps them with `ImageDecodingOptions.bitDepth = .source`.
/// Encodes one-page TIFFs (8 or 16 bits, Deflate).
///
/// Register it once: `TIFFCoder.register()` (or `ImageCoders.shared.add(TIFFCoder())`).
public struct TIFFCoder: ImageCoder {
    /// The TIFF coder.
    public init() {}

    /// Adds a TIFF coder to `coders` (the shared registry by default), tried before the coders
    /// already there.
    public static func register(in coders: ImageCoders = .shared) {
        coders.add(TIFFCoder())
    }

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .tiff }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        var info = wi_tiff_info()
        var out = wi_image()
        let deep: Int32 = options.bitDepth == .source ? 1 : 0
        let status = data.withBytePointer { wi_tiff_decode_at($0, $1, CodecBridge.pixelLimit(options), deep, &info, &out) }
        defer { free(info.icc) }
        guard status == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else {
            throw CodecBridge.error(status, format: .tiff, message: CodecBridge.message(info.message), width: info.width,
                                    height: info.height, limit: options.pixelLimit)
        }
        let orientation = Int(info.orientation)
        let finishing = DecodeFinishing(width: bitmap.width, height: bitmap.height, exifOrientation: orientation, options: options)
        let frame = ImageFrame(bitmap: finishing(bitmap))
        var image = Image(firstFrame: frame, frames: .preloaded([frame]), format: .tiff, loopCount: nil, scale: options.scale,
                          exifOrientation: orientation == 1 ? nil : orientation, orientationApplied: finishing.orientation != nil)
        let icc = info.icc.map { Data(bytes: $0, count: Int(info.icc_length)) }
        image.applyColor(ImageColorInfo(iccProfile: icc), options: options)
        return image
    }

    public func canEncode(_ format: ImageFormat) -> Bool { format == .tiff }

    /// Writes the first frame as a one-page TIFF: RGB or RGBA, 8 bits a sample, or 16 for a
    /// deep bitmap; lossless (Deflate with the horizontal predictor); the image's RGB profile
    /// embedded. Quality and effort do not apply.
    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        guard format == .tiff else { throw ImageError.encodingFailed(format, reason: "the TIFF coder writes TIFF only") }
        let bitmap = image.bitmap
        let deep: Int32 = bitmap.pixelFormat == .rgba16 ? 1 : 0, alpha: Int32 = bitmap.hasTransparency ? 1 : 0
        let icc = image.colorInfo.embeddableProfile ?? Data()
        var buffer = wi_buffer()
        let status = bitmap.withUnsafeBytes { raw in
            icc.withBytePointer { iccBytes, iccLength in
                wi_tiff_encode(raw.baseAddress, UInt32(bitmap.width), UInt32(bitmap.height), deep, alpha,
                               iccLength > 0 ? iccBytes : nil, iccLength, &buffer)
            }
        }
        guard status == WI_OK else { throw ImageError.encodingFailed(.tiff, reason: CodecBridge.message(buffer.message)) }
        return CodecBridge.takeData(&buffer)
    }
}

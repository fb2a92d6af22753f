import CWebImageHEIF
import Foundation
import WebImage

/// HEIC and HEIF through libheif (SDWebImageHEIFCoder's counterpart): the primary image (never
/// a thumbnail item, whichever image `pitm` names), 8/10/12-bit, alpha, with its clean aperture,
/// rotation and mirroring applied by libheif as browsers apply them (an `Exif` orientation inside
/// the file is not applied again). AVIF files, even when they are HEIF underneath, are left to
/// `AVIFCoder`. Encoding writes HEIC where the installed libheif has an HEVC encoder (Debian's
/// has x265): `canEncode(.heic)` says whether it does. A HEIF decodes once it is whole.
///
/// Register it once: `HEIFCoder.register()` (or `ImageCoders.shared.add(HEIFCoder())`).
public struct HEIFCoder: ImageCoder {
    /// The HEIC/HEIF coder.
    public init() {}

    /// Adds a HEIF coder to `coders` (the shared registry by default), tried before the coders
    /// already there.
    public static func register(in coders: ImageCoders = .shared) {
        coders.add(HEIFCoder())
    }

    /// Whether the installed libheif decodes HEVC-coded images (HEIC).
    public static var canDecodeHEVC: Bool { wi_heif_can_decode_hevc() == 1 }

    public func canDecode(_ data: Data) -> Bool {
        let format = ImageFormat(sniffing: data)
        return format == .heic || format == .heif
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        let format = ImageFormat(sniffing: data)
        let items = ISOBMFFItems(data)
        if let refusal = items?.refusal(format: format, pixelLimit: options.pixelLimit) { throw refusal }
        var info = wi_heif_info()
        var status: Int32 = 0
        let handle = data.withBytePointer { wi_heif_open($0, $1, CodecBridge.pixelLimit(options), &info, &status) }
        guard let handle else {
            // A size refused before libheif said it: the file's own declaration.
            let declared = info.coded_width == 0 && status == Int32(WI_ERR_TOO_LARGE)
                ? items?.largestSize.map { (UInt32(clamping: $0.width), UInt32(clamping: $0.height)) } : nil
            throw CodecBridge.error(status, format: format, message: CodecBridge.message(info.message),
                                    width: declared?.0 ?? info.coded_width, height: declared?.1 ?? info.coded_height, limit: options.pixelLimit)
        }
        defer { wi_heif_close(handle) }
        // An HDR image is decoded deep: tone-mapped from its 10 bits, or kept.
        let colorInfo = HEIFCoder.colorInfo(handle, info)
        let hdr = HDRDecoding(colorInfo, options: options)
        var out = wi_image()
        let renderStatus = wi_heif_render_at(handle, options.bitDepth == .source || hdr.decodesDeep ? 1 : 0, &out)
        guard renderStatus == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else {
            throw CodecBridge.error(renderStatus, format: format, message: CodecBridge.message(out.message),
                                    width: info.coded_width, height: info.coded_height, limit: options.pixelLimit)
        }
        // libheif applied the file's own geometry; only the size is left to finish.
        var finishing = DecodeFinishing(width: bitmap.width, height: bitmap.height, exifOrientation: nil, options: options)
        let toneMapped = finishing.mapTones(hdr, options: options)
        let frame = ImageFrame(bitmap: finishing(bitmap))
        var image = Image(firstFrame: frame, frames: .preloaded([frame]), format: format, loopCount: nil,
                          scale: options.scale, exifOrientation: nil, orientationApplied: false)
        image.applyColor(colorInfo, options: options, toneMapped: toneMapped)
        return image
    }

    private static func colorInfo(_ handle: OpaquePointer, _ info: wi_heif_info) -> ImageColorInfo {
        var bytes: UnsafeMutablePointer<UInt8>?
        let length = wi_heif_icc(handle, &bytes)
        let icc = length > 0 ? bytes.map { Data(bytesNoCopy: $0, count: length, deallocator: .free) } : nil
        let cicp = info.has_cicp != 0
            ? ImageColorInfo.CICP(colorPrimaries: Int(info.color_primaries), transferCharacteristics: Int(info.transfer_characteristics),
                                  matrixCoefficients: Int(info.matrix_coefficients), fullRange: info.full_range != 0)
            : nil
        return ImageColorInfo(iccProfile: icc, cicp: cicp)
    }

    public func canEncode(_ format: ImageFormat) -> Bool {
        (format == .heic || format == .heif) && wi_heif_can_encode_hevc() == 1
    }

    /// x265's presets from fastest to slowest, chosen by `ImageEncodingOptions.effort`.
    static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]

    /// Encodes the first frame as HEIC (HEIF holds no animation here: libheif 1.15 writes no
    /// image sequences).
    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        guard format == .heic || format == .heif else {
            throw ImageError.encodingFailed(format, reason: "the HEIF coder writes HEIC only")
        }
        guard canEncode(format) else {
            throw ImageError.encodingFailed(format, reason: "this libheif has no HEVC encoder")
        }
        guard let deepBits = options.deepCodingBits else {
            throw ImageError.encodingFailed(format, reason: "HEIC codes 8, 10 or 12 bits a sample, not \(options.bitsPerSample ?? 0)")
        }
        // A 16-bit image, and an HDR image kept as HDR (with its code points), is coded in 10
        // or 12 bits; others in 8.
        let hdr = image.colorInfo.hdrCICP
        let bits = (image.bitmap.pixelFormat == .rgba16 || hdr != nil) ? deepBits : 8
        let bitmap = image.bitmap.converted(to: bits > 8 ? .rgba16 : .rgba8)
        let quality = Int32((max(0, min(1, options.quality)) * 100).rounded())
        let preset = options.effort.map { HEIFCoder.presets[Int((max(0, min(1, $0)) * Double(HEIFCoder.presets.count - 1)).rounded())] }
        let icc = image.colorInfo.embeddableProfile ?? Data()
        let (exif, xmp) = options.metadata?.blocks(for: image) ?? (nil, nil)
        var buffer = wi_buffer()
        let status = bitmap.withUnsafeBytes { raw in
            icc.withBytePointer { iccBytes, iccLength in
                (exif ?? []).withUnsafeBufferPointer { exif in
                    (xmp ?? []).withUnsafeBufferPointer { xmp in
                        wi_heif_encode(raw.bindMemory(to: UInt8.self).baseAddress, UInt32(bitmap.width), UInt32(bitmap.height),
                                       bitmap.hasTransparency ? 1 : 0, quality, options.lossless ? 1 : 0, preset,
                                       iccLength > 0 ? iccBytes : nil, iccLength, exif.baseAddress, exif.count,
                                       xmp.baseAddress, xmp.count, Int32(bits), Int32(clamping: hdr?.colorPrimaries ?? 0),
                                       Int32(clamping: hdr?.transferCharacteristics ?? 0), &buffer)
                    }
                }
            }
        }
        guard status == WI_OK else {
            throw ImageError.encodingFailed(format, reason: CodecBridge.message(buffer.message))
        }
        return CodecBridge.takeData(&buffer)
    }
}

import CWebImageCodecs
import Foundation

/// The metadata of an encoded file, read and removed without decoding or re-encoding its image:
/// what an image proxy needs to pass a source on without what it says about its author's camera,
/// place and software.
///
/// `stripped(_:format:keepingCopyright:)` removes EXIF (GPS included), XMP, IPTC (Photoshop's
/// APP13), comments, text chunks and anything after the image's end, and keeps what the pixels
/// need to be shown right: the ICC profile and colour chunks, JFIF and Adobe's colour transform,
/// PNG transparency and animation chunks, GIF's loop count. JPEG, PNG, WebP (libwebpmux) and
/// GIF are rewritten; other formats are re-encoded by whoever needs them stripped (their encoders
/// write no metadata).
public enum ImageMetadata {
    /// `data` (an image file in `format`) without its private metadata, losslessly: the same
    /// image data, byte for byte. With `keepingCopyright`, EXIF's Copyright and Artist tags stay,
    /// in an EXIF block of their own (imgproxy's `keep_copyright`; GIF has no EXIF to keep them in).
    /// Nil when `format` is not one rewritten here, or the file's structure is not one it can
    /// follow (the caller then re-encodes the decoded image).
    public static func stripped(_ data: Data, format: ImageFormat, keepingCopyright: Bool = false) -> Data? {
        switch format {
        case .jpeg:
            let exif = keepingCopyright ? JPEGSegments.exifBlock(data).flatMap(ExifCopyright.init(tiff:)) : nil
            return JPEGSegments.stripped(data, exif: exif?.tiff)
        case .png:
            let chunks = PNGChunks(data)
            let exif = keepingCopyright ? chunks.exifBlock(in: data).flatMap(ExifCopyright.init(tiff:)) : nil
            return chunks.stripped(data, exif: exif?.tiff)
        case .webp:
            let exif = keepingCopyright ? WebPCoder.chunk("EXIF", in: data).flatMap(ExifCopyright.init(tiff:)) : nil
            var out = wi_buffer()
            let status = data.withBytePointer { bytes, count in
                (exif?.tiff ?? []).withUnsafeBufferPointer { block in
                    wi_webp_strip_metadata(bytes, count, block.baseAddress, block.count, &out)
                }
            }
            guard status == WI_OK else { free(out.data); return nil }
            return CodecBridge.takeData(&out)
        case .gif:
            return GIFBlocks.stripped(data)
        default:
            return nil
        }
    }

    /// The colour description `data` declares (its ICC profile, or PNG's cICP code points), read
    /// from its header; empty when it declares none or `format` is not one read here.
    package static func colorInfo(of data: Data, format: ImageFormat) -> ImageColorInfo {
        switch format {
        case .jpeg: ImageColorInfo(iccProfile: JPEGSegments.iccProfile(data))
        case .png: PNGChunks(data).colorInfo(in: data)
        case .webp: ImageColorInfo(iccProfile: WebPCoder.chunk("ICCP", in: data).map { Data($0) })
        default: ImageColorInfo()
        }
    }
}

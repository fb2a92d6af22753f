import CWebImageCodecs
import Foundation

/// The metadata of an encoded file, read and removed without decoding or re-encoding its image.
///
/// `ImageMetadata(reading:)` reads a file's EXIF tags as values (``ExifProperties``: orientation,
/// dates, camera and lens, exposure, GPS), its XMP packet and its ICC profile, from JPEG (APP1,
/// APP2), PNG (`eXIf`, `iTXt`, `iCCP`), WebP (`EXIF`, `XMP `, `ICCP`), TIFF (its own tags),
/// HEIF and AVIF (the `Exif` and XMP items, the `colr` profile) and JPEG XL containers (`Exif`
/// and `xml ` boxes; a JPEG XL profile is inside the codestream, read by decoding). GIF, BMP
/// and ICO carry none of them; SVG's are not read.
///
/// `stripped(_:format:keepingCopyright:)` removes EXIF (GPS included), XMP, IPTC (Photoshop's
/// APP13), comments, text chunks and anything after the image's end, and keeps what the pixels
/// need to be shown right: the ICC profile and colour chunks, JFIF and Adobe's colour transform,
/// PNG transparency and animation chunks, GIF's loop count. JPEG, PNG, WebP (libwebpmux) and
/// GIF are rewritten; other formats are re-encoded by whoever needs them stripped (their encoders
/// write no metadata).
public struct ImageMetadata: Sendable, Equatable {
    /// The EXIF tags, when the file has an EXIF block with any of them.
    public var exif: ExifProperties?
    /// The EXIF block as stored (TIFF-structured, without JPEG's `Exif\0\0` prefix): what an
    /// encoder writes when asked to keep the metadata (``ImageEncodingOptions/metadata``).
    public var exifData: Data?
    /// The XMP packet (RDF/XML), as the file stores it.
    public var xmp: String?
    /// The embedded ICC profile, as stored.
    public var iccProfile: Data?

    /// The ICC profile's own description (its `desc` tag), e.g. "Display P3".
    public var iccProfileDescription: String? { iccProfile.flatMap(ICCProfile.description(of:)) }

    /// How to turn the pixels upright: EXIF's orientation, else the XMP packet's
    /// `tiff:Orientation`.
    public var orientation: ExifOrientation? {
        exif?.orientation ?? xmp.flatMap { XMPReader.orientation(Array($0.utf8)) }.flatMap(ExifOrientation.init(rawValue:))
    }

    /// No metadata.
    public init() {}

    /// The metadata of `data`, an image file whose format is sniffed from its first bytes; empty
    /// for a format that carries none, or a file whose structure cannot be followed. Reads no
    /// pixels: only the header's blocks (a JPEG's up to its first scan), and bounds every read
    /// (a stranger's EXIF is untrusted input).
    public init(reading data: Data) {
        var exif: Data?, xmp: Data?
        switch ImageFormat(sniffing: data) {
        case .jpeg:
            exif = JPEGSegments.exifBlock(data)
            xmp = JPEGSegments.xmpPacket(data)
            iccProfile = JPEGSegments.iccProfile(data)
        case .png:
            let chunks = PNGChunks(data)
            exif = chunks.exifBlock(in: data) ?? chunks.legacyExifBlock(in: data)
            xmp = chunks.xmpPacket(in: data)
            iccProfile = chunks.colorInfo(in: data).iccProfile
        case .webp:
            exif = WebPCoder.chunk("EXIF", in: data)
            xmp = WebPCoder.chunk("XMP ", in: data)
            iccProfile = WebPCoder.chunk("ICCP", in: data)
        case .tiff:
            exif = data
            if let reader = TIFFReader(data), let ifd0 = reader.u32(4) {
                var directories = ExifDirectories(reader: reader)
                directories.read(at: ifd0) { tag, value in
                    if tag == 700 { xmp = value.bytes }                  // XMLPacket
                    if tag == 34675 { iccProfile = value.bytes }         // InterColorProfile
                }
            }
        case .heic, .heif, .avif:
            let boxes = ISOBMFFMetadata(heif: data)
            (exif, xmp, iccProfile) = (boxes.exif, boxes.xmp, boxes.icc)
        case .jxl:
            let boxes = ISOBMFFMetadata(jxl: data)
            (exif, xmp) = (boxes.exif, boxes.xmp)
        default:
            break
        }
        self.exif = exif.flatMap(ExifProperties.init(tiff:))
        if let exif, let reader = TIFFReader(exif), self.exif != nil { exifData = Data(reader.bytes) }
        self.xmp = xmp.flatMap { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) }
    }

    /// The EXIF block (a TIFF structure) and the XMP packet to write with `image`: the
    /// orientation written as 1 (up) when the image's pixels were turned upright on decoding.
    /// The encoders that write them themselves (AVIF, JPEG XL) take them from here.
    package func blocks(for image: Image) -> (exif: [UInt8]?, xmp: [UInt8]?) {
        var exif = exifData.map { [UInt8]($0) }
        if image.isOrientationApplied, let block = exif { exif = ExifProperties.withOrientationUp(block) }
        return (exif, xmp.map { Array($0.utf8) })
    }

    /// `encoded` (a file our encoder wrote in `format`, from `image`) with this metadata's EXIF
    /// block and XMP packet written into it: JPEG APP1 segments, PNG `eXIf` and `iTXt` chunks,
    /// WebP `EXIF` and `XMP ` chunks. When the image's pixels were turned upright on decoding,
    /// the EXIF orientation is written as 1 (up), so that no viewer turns them again.
    /// - Throws: `ImageError.encodingFailed` when the format cannot hold them (another format,
    ///   or a JPEG segment's 64 KB).
    package func embedded(in encoded: Data, format: ImageFormat, image: Image) throws -> Data {
        let (exif, xmp) = blocks(for: image)
        guard exif != nil || xmp != nil else { return encoded }
        func failed(_ reason: String) -> ImageError { .encodingFailed(format, reason: reason) }
        switch format {
        case .jpeg:
            if let exif, exif.count > JPEGSegments.segmentCapacity(name: "Exif\0\0") { throw failed("its EXIF block is over a JPEG segment's 64 KB") }
            if let xmp, xmp.count > JPEGSegments.segmentCapacity(name: "http://ns.adobe.com/xap/1.0/\0") {
                throw failed("its XMP packet is over a JPEG segment's 64 KB (extended XMP is not written)")
            }
            guard let out = JPEGSegments.stripped(encoded, exif: exif, xmp: xmp) else { throw failed("the metadata could not be written") }
            return out
        case .png:
            guard let out = PNGChunks(encoded).stripped(encoded, exif: exif, xmp: xmp) else { throw failed("the metadata could not be written") }
            return out
        case .webp:
            var out = wi_buffer()
            let status = encoded.withBytePointer { bytes, count in
                (exif ?? []).withUnsafeBufferPointer { exifBlock in
                    (xmp ?? []).withUnsafeBufferPointer { xmpBlock in
                        wi_webp_strip_metadata(bytes, count, exifBlock.baseAddress, exifBlock.count, xmpBlock.baseAddress, xmpBlock.count, &out)
                    }
                }
            }
            guard status == WI_OK else { free(out.data); throw failed(CodecBridge.message(out.message)) }
            return CodecBridge.takeData(&out)
        default:
            throw failed("this encoder writes no EXIF or XMP")
        }
    }

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
                    wi_webp_strip_metadata(bytes, count, block.baseAddress, block.count, nil, 0, &out)
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

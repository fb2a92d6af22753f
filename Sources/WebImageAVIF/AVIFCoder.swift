import CWebImageAVIF
import Foundation
import WebImage

/// AVIF through libavif (SDWebImageAVIFCoder's counterpart): still images, grids and image
/// sequences (`avis`), 8/10/12-bit, 4:2:0/4:2:2/4:4:4/monochrome, alpha (premultiplied or not),
/// decoded to 8-bit RGBA with `round(v * 255 / max)`. The clean aperture (`clap`), rotation
/// (`irot`) and mirroring (`imir`) are part of the image and always applied, in that order, as
/// browsers and libheif apply them; `exifOrientation` reports what `irot`/`imir` amount to, with
/// `isOrientationApplied`. An `Exif` block inside an AVIF is not applied (the boxes are the
/// orientation). Sequences decode their frames on demand; libavif has no incremental decoder, so
/// an AVIF decodes once it is whole.
///
/// Register it once: `AVIFCoder.register()` (or `ImageCoders.shared.add(AVIFCoder())`).
public struct AVIFCoder: ImageCoder {
    /// How hard the encoder works, from 0 (libavif speed 10, fastest) to 1 (speed 0, smallest
    /// files); nil leaves libavif's default. `ImageEncodingOptions.effort` overrides it.
    public var effort: Double?

    /// The AVIF coder.
    public init(effort: Double? = nil) { self.effort = effort }

    /// Adds an AVIF coder to `coders` (the shared registry by default), tried before the coders
    /// already there.
    public static func register(in coders: ImageCoders = .shared) {
        coders.add(AVIFCoder())
    }

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .avif }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        let items = ISOBMFFItems(data)
        if let refusal = items?.refusal(format: .avif, pixelLimit: options.pixelLimit) { throw refusal }
        var info = wi_avif_info()
        var status: Int32 = 0
        let handle = data.withBytePointer { wi_avif_open($0, $1, CodecBridge.pixelLimit(options), &info, &status) }
        guard let handle else {
            let message = CodecBridge.message(info.message)
            if status == Int32(WI_ERR_TOO_LARGE), info.coded_width == 0 {
                // libavif refused the declared size before saying it: the file's own declaration.
                let declared = items?.largestSize ?? (0, 0)
                throw ImageError.tooLarge(width: declared.width, height: declared.height, limit: options.pixelLimit)
            }
            throw CodecBridge.error(status, format: .avif, message: message, width: info.coded_width,
                                    height: info.coded_height, limit: options.pixelLimit)
        }
        // libavif seeks from the nearest keyframe when asked for an earlier frame.
        // A still image coded in 10 or 12 bits keeps them when asked (`bitDepth`) and when it
        // is HDR (tone-mapped from them, or kept); a sequence's frames are composited in 8 bits.
        let colorInfo = AVIFCoder.colorInfo(handle, info)
        let hdr = HDRDecoding(colorInfo, options: options)
        let deep: Int32 = (options.bitDepth == .source || hdr.decodesDeep) && info.frame_count <= 1 ? 1 : 0
        let decoder = CodecFrameRenderer(handle: handle, format: .avif, render: { wi_avif_render_at($0, $1, deep, $2) },
                                         close: { wi_avif_close($0) })
        let orientation = AVIFCoder.orientation(rotation: Int(info.rotation), mirror: Int(info.mirror))
        var geometry = options
        geometry.appliesOrientation = true   // irot and imir are the image's own, not a hint
        var finishing = DecodeFinishing(width: Int(info.width), height: Int(info.height),
                                        exifOrientation: orientation, options: geometry)
        let toneMapped = finishing.mapTones(hdr, options: options)
        let count = options.firstFrameOnly ? 1 : Int(info.frame_count)
        let durations = count > 1 ? (0..<count).map { wi_avif_frame_duration(handle, UInt32($0)) } : [0]
        // libavif 0.11 reads no loop count (edts): a sequence plays forever, as browsers play it.
        var image = try AnimationAssembly.image(renderer: decoder, durations: durations, format: .avif,
                                                loopCount: count > 1 ? 0 : nil, finishing: finishing,
                                                orientation: orientation, options: options)
        image.applyColor(colorInfo, options: options, toneMapped: toneMapped)
        return image
    }

    /// The EXIF orientation that turns stored pixels as `irot` (anti-clockwise quarter turns)
    /// and then `imir` (0: top and bottom swapped, 1: left and right swapped) do; nil for none.
    static func orientation(rotation: Int, mirror: Int) -> Int? {
        let value: Int
        switch mirror {
        case 0: value = [4, 5, 2, 7][rotation & 3]
        case 1: value = [2, 7, 4, 5][rotation & 3]
        default: value = [1, 8, 3, 6][rotation & 3]
        }
        return value == 1 ? nil : value
    }

    public func canEncode(_ format: ImageFormat) -> Bool { format == .avif && wi_avif_can_encode() == 1 }

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        guard format == .avif else { throw ImageError.encodingFailed(format, reason: "the AVIF coder writes AVIF only") }
        guard wi_avif_can_encode() == 1 else {
            throw ImageError.encodingFailed(.avif, reason: "this libavif was built without an AV1 encoder")
        }
        let quality = Int32((max(0, min(1, options.quality)) * 100).rounded())
        let speed = (options.effort ?? effort).map { Int32((10 - max(0, min(1, $0)) * 10).rounded()) } ?? -1
        guard let deepBits = options.deepCodingBits else {
            throw ImageError.encodingFailed(.avif, reason: "AVIF codes 8, 10 or 12 bits a sample, not \(options.bitsPerSample ?? 0)")
        }
        let hasAlpha: Int32 = image.isAnimated || image.bitmap.hasTransparency ? 1 : 0
        guard let encoder = wi_avif_encoder_create(quality, options.lossless ? 1 : 0, speed, hasAlpha) else {
            throw ImageError.encodingFailed(.avif, reason: "out of memory")
        }
        defer { wi_avif_encoder_destroy(encoder) }
        if deepBits > 8 { _ = wi_avif_encoder_set_depth(encoder, Int32(deepBits)) }
        if let icc = image.colorInfo.embeddableProfile {
            _ = icc.withBytePointer { wi_avif_encoder_set_icc(encoder, $0, $1) }
        } else if let cicp = image.colorInfo.hdrCICP {
            // An HDR image kept as HDR: its code points.
            _ = wi_avif_encoder_set_cicp(encoder, Int32(clamping: cicp.colorPrimaries), Int32(clamping: cicp.transferCharacteristics))
        }
        if let (exif, xmp) = options.metadata?.blocks(for: image) {
            _ = (exif ?? []).withUnsafeBufferPointer { exif in
                (xmp ?? []).withUnsafeBufferPointer { xmp in
                    wi_avif_encoder_set_metadata(encoder, exif.baseAddress, exif.count, xmp.baseAddress, xmp.count)
                }
            }
        }
        var message = wi_buffer().message
        // One frame at a time: an animation decoded on demand holds one canvas, not every frame.
        for index in 0..<image.frameCount {
            if Task.isCancelled { throw CancellationError() }
            let frame = try image.frame(at: index)
            let duration = UInt32(max(1, (frame.duration * 1000).rounded())), single: Int32 = image.isAnimated ? 0 : 1
            // A deep still image is coded in 10 or 12 bits (or 8 when asked); an animation's frames in 8.
            let deep = !image.isAnimated && frame.bitmap.pixelFormat == .rgba16 && deepBits > 8
            let bitmap = deep ? frame.bitmap : frame.bitmap.converted(to: .rgba8)
            let status = bitmap.withUnsafeBytes { raw in
                withUnsafeMutableBytes(of: &message) { text in
                    let text = text.bindMemory(to: CChar.self).baseAddress
                    return deep
                        ? wi_avif_encoder_add_16(encoder, raw.bindMemory(to: UInt16.self).baseAddress, UInt32(bitmap.width),
                                                 UInt32(bitmap.height), duration, single, text)
                        : wi_avif_encoder_add(encoder, raw.bindMemory(to: UInt8.self).baseAddress, UInt32(bitmap.width),
                                              UInt32(bitmap.height), duration, single, text)
                }
            }
            guard status == WI_OK else { throw ImageError.encodingFailed(.avif, reason: CodecBridge.message(message)) }
        }
        var buffer = wi_buffer()
        guard wi_avif_encoder_finish(encoder, &buffer) == WI_OK else {
            throw ImageError.encodingFailed(.avif, reason: CodecBridge.message(buffer.message))
        }
        return CodecBridge.takeData(&buffer)
    }
}

extension AVIFCoder {
    /// The ICC profile and CICP code points of the image libavif's `handle` opened.
    static func colorInfo(_ handle: OpaquePointer, _ info: wi_avif_info) -> ImageColorInfo {
        var bytes: UnsafePointer<UInt8>?
        let length = wi_avif_icc(handle, &bytes)
        let icc = length > 0 ? bytes.map { Data(bytes: $0, count: length) } : nil
        let cicp = ImageColorInfo.CICP(colorPrimaries: Int(info.color_primaries),
                                       transferCharacteristics: Int(info.transfer_characteristics),
                                       matrixCoefficients: Int(info.matrix_coefficients), fullRange: info.full_range != 0)
        return ImageColorInfo(iccProfile: icc, cicp: cicp)
    }
}

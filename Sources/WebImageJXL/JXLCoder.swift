import CWebImageJXL
import Foundation
import WebImage

/// JPEG XL through libjxl (SDWebImageJPEGXLCoder's counterpart): bare codestreams and the
/// ISO-BMFF container, lossless and lossy (VarDCT, modular, recompressed JPEG), grey, alpha
/// (associated alpha un-premultiplied), 8 to 16 bits rounded to 8, the codestream orientation
/// applied (libjxl's default, as browsers show it), animations composited on the full canvas
/// and decoded frame by frame on demand. Progressive loading: `makeIncrementalDecoder` shows
/// each pass as it arrives, each byte decoded once.
///
/// Register it once: `JXLCoder.register()` (or `ImageCoders.shared.add(JXLCoder())`).
public struct JXLCoder: ImageCoder {
    /// The JPEG XL coder.
    public init() {}

    /// Adds a JPEG XL coder to `coders` (the shared registry by default), tried before the
    /// coders already there.
    public static func register(in coders: ImageCoders = .shared) {
        coders.add(JXLCoder())
    }

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .jxl }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        var info = wi_jxl_info()
        var status: Int32 = 0
        let handle = data.withBytePointer { wi_jxl_open($0, $1, CodecBridge.pixelLimit(options), &info, &status) }
        guard let handle else {
            throw CodecBridge.error(status, format: .jxl, message: CodecBridge.message(info.message),
                                    width: info.width, height: info.height, limit: options.pixelLimit)
        }
        // Every frame of an animation is a full canvas that libjxl decodes: its frames count
        // against the pixel limit together, as the frames of a result do.
        let frames = Int(info.frame_count), (pixels, overflow) = (Int(info.width) * Int(info.height)).multipliedReportingOverflow(by: frames)
        if !options.firstFrameOnly, frames > 1, overflow || pixels > options.pixelLimit {
            wi_jxl_close(handle)
            throw ImageError.animationTooLarge(width: Int(info.width), height: Int(info.height), frames: frames, limit: options.pixelLimit)
        }
        // Frames are decoded in order; an earlier frame rewinds libjxl's decoder.
        // A still image of more than 8 bits a sample keeps them when asked (`bitDepth`), and
        // when it is HDR (tone-mapped from them, or kept).
        let colorInfo = JXLCoder.colorInfo(handle, info)
        let hdr = HDRDecoding(colorInfo, options: options)
        let deep: Int32 = (options.bitDepth == .source || hdr.decodesDeep) && (options.firstFrameOnly || frames <= 1) ? 1 : 0
        let renderer = CodecFrameRenderer(handle: handle, format: .jxl, render: { wi_jxl_render_at($0, $1, deep, $2) },
                                          close: { wi_jxl_close($0) })
        // libjxl turned the pixels upright already: only the size is left to finish.
        var finishing = DecodeFinishing(width: Int(info.width), height: Int(info.height), exifOrientation: nil, options: options)
        let toneMapped = finishing.mapTones(hdr, options: options)
        let count = options.firstFrameOnly ? 1 : Int(info.frame_count)
        let durations = count > 1 ? (0..<count).map { wi_jxl_frame_duration(handle, UInt32($0)) } : [0]
        if count == 1 {
            // A still image: libjxl's decoder (its own full-size planes) is let go before the
            // resampler runs, so a thumbnail never holds both.
            let bitmap = try renderer.render(0)
            _ = consume renderer
            let frame = ImageFrame(bitmap: finishing(bitmap))
            var image = Image(firstFrame: frame, frames: .preloaded([frame]), format: .jxl, loopCount: nil,
                              scale: options.scale, exifOrientation: nil, orientationApplied: false)
            image.applyColor(colorInfo, options: options, toneMapped: toneMapped)
            return image
        }
        var image = try AnimationAssembly.image(renderer: renderer, durations: durations, format: .jxl,
                                                loopCount: count > 1 ? Int(info.loop_count) : nil, finishing: finishing,
                                                orientation: nil, options: options)
        image.applyColor(colorInfo, options: options, toneMapped: toneMapped)
        return image
    }

    public func canEncode(_ format: ImageFormat) -> Bool { format == .jxl }

    /// Encodes losslessly with `lossless` (or quality 1), else at the Butteraugli distance that
    /// cjxl gives the quality (0.9 is distance 1.0, visually lossless); effort 1...9 from
    /// `ImageEncodingOptions.effort` (libjxl's default 7 without it). Animations keep their
    /// frames, durations (in milliseconds) and loop count.
    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        guard format == .jxl else { throw ImageError.encodingFailed(format, reason: "the JPEG XL coder writes JPEG XL only") }
        let quality = Int32((max(0, min(1, options.quality)) * 100).rounded())
        let effort = options.effort.map { Int32(1 + (max(0, min(1, $0)) * 8).rounded()) } ?? 0
        let hasAlpha: Int32 = image.isAnimated || image.bitmap.hasTransparency ? 1 : 0
        // A deep still image is written with 16 bits a sample; an animation's frames with 8.
        let deep = !image.isAnimated && image.bitmap.pixelFormat == .rgba16
        let icc = image.colorInfo.embeddableProfile ?? Data()
        // Without a profile, the code points an HDR image was kept with (else sRGB's).
        let cicp = image.colorInfo.hdrCICP
        let (primaries, transfer) = (Int32(clamping: cicp?.colorPrimaries ?? 1), Int32(clamping: cicp?.transferCharacteristics ?? 13))
        var message = wi_buffer().message
        let encoder = icc.withBytePointer { iccBytes, iccLength in
            withUnsafeMutableBytes(of: &message) { text in
                wi_jxl_encoder_create(UInt32(image.width), UInt32(image.height), hasAlpha, deep ? 1 : 0, image.isAnimated ? 1 : 0,
                                      UInt32(image.loopCount ?? 0), quality, options.lossless ? 1 : 0, effort,
                                      iccLength > 0 ? iccBytes : nil, iccLength, primaries, transfer,
                                      text.bindMemory(to: CChar.self).baseAddress)
            }
        }
        guard let encoder else { throw ImageError.encodingFailed(.jxl, reason: CodecBridge.message(message)) }
        defer { wi_jxl_encoder_destroy(encoder) }
        if let (exif, xmp) = options.metadata?.blocks(for: image) {
            let status = (exif ?? []).withUnsafeBufferPointer { exif in
                (xmp ?? []).withUnsafeBufferPointer { xmp in
                    wi_jxl_encoder_set_metadata(encoder, exif.baseAddress, exif.count, xmp.baseAddress, xmp.count)
                }
            }
            guard status == WI_OK else { throw ImageError.encodingFailed(.jxl, reason: "libjxl refused the EXIF or XMP box") }
        }
        // One frame at a time: an animation decoded on demand holds one canvas, not every frame.
        for index in 0..<image.frameCount {
            if Task.isCancelled { throw CancellationError() }
            let frame = try image.frame(at: index)
            let status = frame.bitmap.converted(to: deep ? .rgba16 : .rgba8).withUnsafeBytes { raw in
                wi_jxl_encoder_add(encoder, raw.bindMemory(to: UInt8.self).baseAddress, UInt32(max(0, (frame.duration * 1000).rounded())))
            }
            guard status == WI_OK else { throw ImageError.encodingFailed(.jxl, reason: "libjxl refused frame \(index)") }
        }
        var buffer = wi_buffer()
        guard wi_jxl_encoder_finish(encoder, &buffer) == WI_OK else {
            throw ImageError.encodingFailed(.jxl, reason: CodecBridge.message(buffer.message))
        }
        return CodecBridge.takeData(&buffer)
    }

    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        JXLIncrementalDecoder(options: options)
    }
}

extension JXLCoder {
    /// The ICC profile of the pixels libjxl's `handle` decodes and the colour encoding's CICP
    /// code points.
    static func colorInfo(_ handle: OpaquePointer, _ info: wi_jxl_info) -> ImageColorInfo {
        var bytes: UnsafePointer<UInt8>?
        let length = wi_jxl_icc(handle, &bytes)
        return colorInfo(icc: length > 0 ? bytes.map { Data(bytes: $0, count: length) } : nil, info)
    }

    /// The colour description of decoded pixels: the profile libjxl gives for them and the
    /// code points of the header's colour encoding.
    static func colorInfo(icc: Data?, _ info: wi_jxl_info) -> ImageColorInfo {
        let cicp = info.has_cicp != 0
            ? ImageColorInfo.CICP(colorPrimaries: Int(info.color_primaries), transferCharacteristics: Int(info.transfer_characteristics),
                                  matrixCoefficients: 0, fullRange: true)
            : nil
        return ImageColorInfo(iccProfile: icc, cicp: cicp)
    }
}

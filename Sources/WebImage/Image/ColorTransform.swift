import CWebImageCodecs
import Foundation
import Synchronization

/// A conversion to sRGB built from a colour description, shared by every decode of images that
/// carry the same one (building it costs up to milliseconds for a CMYK profile's tables;
/// applying it is one pass over the pixels, in place). An RGB matrix-shaper profile (Display
/// P3, Adobe RGB, ProPhoto, the CICP primaries) converts through tables read from lcms2's
/// parsed profile; every other profile through lcms2's own transform.
package final class ColorTransform: @unchecked Sendable {
    // @unchecked: the lcms2 transform is created without its cache (cmsFLAGS_NOCACHE), which
    // makes applying it safe from any number of threads at once; it is never changed.
    private let transform: OpaquePointer

    /// Whether it reads CMYK inks (a CMYK JPEG's samples) rather than RGBA pixels.
    package let readsCMYK: Bool
    /// Bytes a pixel it converts: 4, or 8 for 16 bits a channel.
    private let pixelBytes: Int

    private init(_ transform: OpaquePointer, input: Int32, deep: Bool) {
        self.transform = transform
        readsCMYK = input == Int32(WI_COLOR_INPUT_CMYK)
        pixelBytes = deep ? 8 : 4
    }

    deinit { wi_color_transform_free(transform) }

    /// Converts `bitmap`'s pixels to sRGB in place (copying them first only if they are shared).
    /// A large image is split in bands converted on every core at once, the calling thread
    /// taking one (the work is pure CPU, as the decode that precedes it). A JPEG decoder
    /// converts its rows as it makes them instead (`wi_color_rows_start`).
    package func apply(to bitmap: inout Bitmap) {
        guard bitmap.pixelFormat.bytesPerPixel == pixelBytes else { return }
        let pixelBytes = self.pixelBytes
        bitmap.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            let pixels = base.assumingMemoryBound(to: UInt8.self), count = bytes.count / pixelBytes
            let bands = min(ProcessInfo.processInfo.activeProcessorCount, count / ColorTransform.bandPixels)
            guard bands > 1 else {
                convert(pixels, count)
                return
            }
            let step = (count + bands - 1) / bands
            let address = UInt(bitPattern: pixels)
            DispatchQueue.concurrentPerform(iterations: bands) { band in
                let start = band * step
                guard start < count, let pointer = UnsafeMutablePointer<UInt8>(bitPattern: address) else { return }
                self.convert(pointer + start * pixelBytes, min(step, count - start))
            }
        }
    }

    /// Calls `body` with the C transform of `transform` (nil for none), kept alive meanwhile:
    /// for a decoder that converts rows as it makes them.
    package static func withOptionalPointer<R>(_ transform: ColorTransform?, _ body: (OpaquePointer?) throws -> R) rethrows -> R {
        guard let transform else { return try body(nil) }
        return try withExtendedLifetime(transform) { try body(transform.transform) }
    }

    private func convert(_ pixels: UnsafeMutablePointer<UInt8>, _ count: Int) {
        wi_color_transform_apply(transform, pixels, count)
    }

    /// The fewest pixels worth a band of their own (below it, starting a thread costs more).
    private static let bandPixels = 1 << 19

    private enum Key: Hashable {
        /// A profile by its SHA-256: the cache never holds a stranger's profile bytes (up to
        /// 4 MiB each), only its transform. `deep`: for 16 bits a channel.
        case icc(String, deep: Bool)
        case cicp(Int, Int, deep: Bool)
    }

    /// Transforms by description; nil entries remember descriptions with nothing to convert.
    private static let cache = Mutex<[Key: ColorTransform?]>([:])
    private static let cacheLimit = 32

    /// The conversion of pixels described by `info` to sRGB: from its ICC profile when it has
    /// one, else from its CICP code points; nil when they are sRGB's already, or when the
    /// profile is unreadable or of a kind not converted (the pixels are then left as stored,
    /// as browsers show an image whose profile they cannot use).
    /// `deep`: for pixels of 16 bits a channel (lcms2's own transform at that depth).
    package static func toSRGB(_ info: ImageColorInfo, deep: Bool = false) -> ColorTransform? {
        let key: Key
        if let icc = info.iccProfile, !icc.isEmpty {
            key = .icc(Digest.sha256(icc), deep: deep)
        } else if let cicp = info.cicp {
            key = .cicp(cicp.colorPrimaries, cicp.transferCharacteristics, deep: deep)
        } else {
            return nil
        }
        if let known = cache.withLock({ $0[key] }) { return known }
        var pointer: OpaquePointer?
        var input: Int32 = 0
        let flags = deep ? Int32(WI_COLOR_DEEP) : 0
        let status: Int32
        switch key {
        case .icc:
            status = (info.iccProfile ?? Data()).withBytePointer { wi_color_transform_from_icc($0, $1, flags, &pointer, &input) }
        case .cicp(let primaries, let transfer, _):
            status = wi_color_transform_from_cicp(Int32(primaries), Int32(transfer), flags, &pointer, &input)
        }
        let transform = status == WI_OK ? pointer.map { ColorTransform($0, input: input, deep: deep) } : nil
        cache.withLock { cache in
            if cache.count >= cacheLimit { cache.removeAll() }
            cache[key] = .some(transform)
        }
        return transform
    }
}

extension Image {
    /// Sets the colour description a decoder read, and converts the pixels to sRGB when
    /// `options` ask for it (the default) and the description is not sRGB's: frame 0 and any
    /// preloaded frame in place, lazily decoded frames as they are decoded. Decoders call it
    /// once, on the image they made, while nothing else holds it.
    /// An HDR image (PQ or HLG) is tone-mapped instead, unless `options` keep it
    /// (`ImageDynamicRange.high`): `toneMapped` says the decoder's finishing mapped it already
    /// from its deep samples (`DecodeFinishing.mapTones`), else it is mapped here.
    package mutating func applyColor(_ info: ImageColorInfo, options: ImageDecodingOptions, toneMapped: Bool = false) {
        colorInfo = info
        switch HDRDecoding(info, options: options) {
        case .keep:
            return
        case .toneMap(let mapper):
            if !toneMapped {
                let format: PixelFormat = options.bitDepth == .source ? .rgba16 : .rgba8
                convertPixels { $0 = mapper.map($0, to: format) }
            }
            colorInfo = ImageColorInfo()
            return
        case .none:
            break
        }
        guard options.colorSpace == .sRGB, !info.isEmpty,
              let transform = ColorTransform.toSRGB(info, deep: bitmap.pixelFormat == .rgba16), !transform.readsCMYK else { return }
        convertPixels { transform.apply(to: &$0) }
        colorInfo = ImageColorInfo()
    }

    /// Runs `convert` over every frame (frame 0 and preloaded ones now, lazily decoded ones as
    /// they are decoded): the pixels are converted where they are when this image was their
    /// only holder.
    private mutating func convertPixels(_ convert: @escaping @Sendable (inout Bitmap) -> Void) {
        let scale = self.scale
        var parts = Image.parts(of: self)
        // This image lets go of its content: the parts now hold the only references to the pixels.
        self = Image.placeholder
        convert(&parts.first.bitmap)
        for index in parts.rest.indices { convert(&parts.rest[index].bitmap) }
        let frames: FrameStore
        if let lazy = parts.lazy {
            frames = .lazy(LazyFrames(renderer: ConvertedFrames(lazy), durations: lazy.durations, retainedCost: lazy.retainedCost) { raw in
                var bitmap = raw
                convert(&bitmap)
                return bitmap
            })
        } else {
            frames = .preloaded([parts.first] + parts.rest)
        }
        self = Image(firstFrame: parts.first, frames: frames, format: parts.format, loopCount: parts.loopCount, scale: scale,
                     exifOrientation: parts.exifOrientation, orientationApplied: parts.orientationApplied)
    }

    private struct Parts {
        var first: ImageFrame
        var rest: [ImageFrame]
        var lazy: LazyFrames?
        let format: ImageFormat
        let loopCount: Int?
        let exifOrientation: Int?
        let orientationApplied: Bool
    }

    /// The frames and facts of `image`, without its content: once the image is gone, the
    /// frames' pixels are held by the parts alone (frame 0 once, not also as the first of the
    /// preloaded frames).
    private static func parts(of image: Image) -> Parts {
        let content = image.content
        var rest: [ImageFrame] = []
        var lazy: LazyFrames?
        switch content.frames {
        case .preloaded(let frames): rest = Array(frames.dropFirst())
        case .lazy(let frames): lazy = frames
        }
        return Parts(first: content.firstFrame, rest: rest, lazy: lazy, format: content.format, loopCount: content.loopCount,
                     exifOrientation: content.exifOrientation, orientationApplied: content.orientationApplied)
    }

    /// What an image being rebuilt holds meanwhile.
    private static let placeholder = Image(bitmap: Bitmap(width: 1, height: 1))
}

/// The frames of a lazily decoded animation, for a `LazyFrames` that converts each.
private final class ConvertedFrames: FrameRenderer {
    let base: LazyFrames
    init(_ base: LazyFrames) { self.base = base }
    func render(_ index: Int) throws -> Bitmap { try base.bitmap(at: index) }
}

import CWebImageCodecs
import Foundation
import Synchronization

/// HDR (PQ or HLG) pixels mapped to SDR sRGB (`ImageDynamicRange.standard`): BT.2390's EETF
/// on the largest linear component into BT.2408's reference white as SDR white, the primaries
/// converted to sRGB's (wi_tone_map.c). One map per set of code points, shared by every decode.
package final class ToneMapper: @unchecked Sendable {
    // @unchecked: the C map is tables only, read and never changed after it is built.
    private let map: OpaquePointer

    private init(_ map: OpaquePointer) { self.map = map }

    deinit { wi_tone_map_free(map) }

    /// The map for `cicp`, or nil when it is not PQ or HLG over BT.709, BT.2020 or P3 primaries.
    package static func forHDR(_ cicp: ImageColorInfo.CICP) -> ToneMapper? {
        let key = [cicp.colorPrimaries, cicp.transferCharacteristics]
        if let known = cache.withLock({ $0[key] }) { return known }
        var pointer: OpaquePointer?
        let status = wi_tone_map_create(Int32(clamping: cicp.colorPrimaries), Int32(clamping: cicp.transferCharacteristics), 0, &pointer)
        let mapper = status == WI_OK ? pointer.map(ToneMapper.init) : nil
        cache.withLock { $0[key] = .some(mapper) }
        return mapper
    }

    /// Code points seen; a handful at most (three primaries by two transfers).
    private static let cache = Mutex<[[Int]: ToneMapper?]>([:])

    /// `bitmap` (HDR values, widened first when 8-bit) mapped to sRGB, in `format`. A large
    /// image is split in bands mapped on every core at once, as colour conversion is.
    package func map(_ bitmap: Bitmap, to format: PixelFormat) -> Bitmap {
        let source = bitmap.converted(to: .rgba16)
        let count = source.width * source.height
        let storage = PixelStorage(uninitializedCount: count * format.bytesPerPixel)
        let deep: Int32 = format == .rgba16 ? 1 : 0, outputBytes = format.bytesPerPixel
        source.withUnsafeBytes { raw in
            guard let input = raw.bindMemory(to: UInt16.self).baseAddress else { return }
            let bands = min(ProcessInfo.processInfo.activeProcessorCount, count / ToneMapper.bandPixels)
            guard bands > 1 else {
                wi_tone_map_apply(map, input, count, storage.pointer, deep)
                return
            }
            let step = (count + bands - 1) / bands
            let (inputAddress, outputAddress) = (UInt(bitPattern: input), UInt(bitPattern: storage.pointer))
            DispatchQueue.concurrentPerform(iterations: bands) { band in
                let start = band * step
                guard start < count, let input = UnsafePointer<UInt16>(bitPattern: inputAddress),
                      let output = UnsafeMutablePointer<UInt8>(bitPattern: outputAddress) else { return }
                wi_tone_map_apply(self.map, input + start * 4, min(step, count - start), output + start * outputBytes, deep)
            }
        }
        return Bitmap(width: source.width, height: source.height, storage: storage, pixelFormat: format)
    }

    /// The fewest pixels worth a band of their own.
    private static let bandPixels = 1 << 19
}

/// What a decode does with an image's dynamic range, decided from its colour description and
/// the options: nothing for SDR (or for stored values), a tone map, or HDR kept.
package enum HDRDecoding {
    /// An SDR image, or one decoded as stored (`ImageColorSpace.original`).
    case none
    /// Tone-mapped to sRGB, in the depth `bitDepth` asks for.
    case toneMap(ToneMapper)
    /// Kept as HDR: deep, with its code points.
    case keep

    /// The decision for pixels described by `info` under `options`. HDR is PQ or HLG code
    /// points, which a file signals only on purpose (an ICC profile beside them, as libjxl
    /// derives one for every image, describes the same encoding).
    package init(_ info: ImageColorInfo, options: ImageDecodingOptions) {
        guard options.colorSpace == .sRGB, let cicp = info.cicp,
              cicp.transferCharacteristics == Int(WI_TRANSFER_PQ) || cicp.transferCharacteristics == Int(WI_TRANSFER_HLG),
              let mapper = ToneMapper.forHDR(cicp) else {
            self = .none
            return
        }
        self = options.dynamicRange == .high ? .keep : .toneMap(mapper)
    }

    /// Whether the codec should give its samples at 16 bits (it does for HDR either way).
    package var decodesDeep: Bool {
        if case .none = self { return false }
        return true
    }

    /// The tone map, when there is one.
    package var toneMapper: ToneMapper? {
        if case .toneMap(let mapper) = self { return mapper }
        return nil
    }
}

/// What every decoder does after the codec produced stored pixels: fit to `maxPixelSize`
/// and turn upright for the EXIF orientation.
package struct DecodeFinishing: Sendable {
    let targetWidth: Int?
    let targetHeight: Int?
    package let orientation: ExifOrientation?
    /// The tone map the frames go through first, from their deep samples, and the depth it
    /// gives (`mapTones`).
    private var toneMap: (ToneMapper, PixelFormat)?

    /// Finishing for an image whose stored canvas is `width` x `height`.
    package init(width: Int, height: Int, exifOrientation: Int?, options: ImageDecodingOptions) {
        let target = options.targetSize(width: width, height: height, exifOrientation: exifOrientation)
        if target.width != width || target.height != height {
            targetWidth = target.width
            targetHeight = target.height
        } else {
            targetWidth = nil
            targetHeight = nil
        }
        if options.appliesOrientation, let raw = exifOrientation, let value = ExifOrientation(rawValue: raw), value != .up {
            orientation = value
        } else {
            orientation = nil
        }
    }

    /// The size the stored canvas is reduced to (before orientation), or nil when it is kept.
    package var reducedSize: (width: Int, height: Int)? {
        guard let w = targetWidth, let h = targetHeight else { return nil }
        return (w, h)
    }

    /// Whether a decoded bitmap of `width` x `height` is scaled down by this finishing.
    package func downscales(width: Int, height: Int) -> Bool {
        guard let w = targetWidth, let h = targetHeight else { return false }
        return width > w || height > h
    }

    /// Maps every frame's tones first when `hdr` says so, into the depth `options` ask for;
    /// returns whether it will (for `Image.applyColor(_:options:toneMapped:)`).
    package mutating func mapTones(_ hdr: HDRDecoding, options: ImageDecodingOptions) -> Bool {
        guard let mapper = hdr.toneMapper else { return false }
        toneMap = (mapper, options.bitDepth == .source ? .rgba16 : .rgba8)
        return true
    }

    package func callAsFunction(_ bitmap: Bitmap) -> Bitmap {
        var result = bitmap
        if let (mapper, format) = toneMap { result = mapper.map(result, to: format) }
        if downscales(width: result.width, height: result.height), let w = targetWidth, let h = targetHeight {
            result = result.areaDownscaled(toWidth: w, height: h)
        }
        if let orientation { result = result.oriented(orientation) }
        return result
    }
}

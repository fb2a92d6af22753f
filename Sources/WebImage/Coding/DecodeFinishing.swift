/// What every decoder does after the codec produced stored pixels: fit to `maxPixelSize`,
/// turn upright for the EXIF orientation, and cut the fill box (`ImageDecodingOptions.fillAnchor`).
package struct DecodeFinishing: Sendable {
    let targetWidth: Int?
    let targetHeight: Int?
    package let orientation: ExifOrientation?
    /// The tone map the frames go through first, from their deep samples, and the depth it
    /// gives (`mapTones`).
    private var toneMap: (ToneMapper, PixelFormat)?
    /// The fill box and where it is cut (`ImageDecodingOptions.fillAnchor`), after orientation.
    private let cut: (FillAnchor, PixelSize)?

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
        if let anchor = options.fillAnchor, let box = options.fillSize, box.width > 0, box.height > 0 {
            cut = (anchor, box)
        } else {
            cut = nil
        }
    }

    /// The rows of the reduced canvas the fill box keeps, when a decoder can make those alone
    /// (no orientation to apply after): nil when every row is kept.
    package var keptRows: (top: Int, count: Int)? {
        guard let (anchor, box) = cut, orientation == nil, let reduced = reducedSize,
              let rect = anchor.cut(box, width: reduced.width, height: reduced.height), rect.height < reduced.height else { return nil }
        return (rect.y, rect.height)
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
        if let (anchor, box) = cut { result = anchor.cut(result, to: box) }
        return result
    }
}

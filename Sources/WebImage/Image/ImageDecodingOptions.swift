/// How a coder turns encoded data into an `Image`.
///
/// The defaults decode every frame lazily, apply EXIF orientation, convert to sRGB, and refuse
/// images over 100 megapixels before allocating any pixel memory.
public struct ImageDecodingOptions: Sendable, Hashable {
    /// When set, the decoded image fits in `maxPixelSize` x `maxPixelSize` (aspect ratio kept,
    /// never enlarged). JPEG uses libjpeg's DCT scaling and WebP libwebp's scaler first, so the
    /// full-size pixels are never held.
    public var maxPixelSize: Int?
    /// When set, the decoded image holds at most this many pixels (aspect ratio kept, never
    /// enlarged): SDWebImage's `scaleDownLargeImages` limit. Uses the same fast paths as
    /// `maxPixelSize`.
    public var maxPixelCount: Int?
    /// When set, the decoded image is reduced (never enlarged) to the smallest size that still
    /// fills this box: width and height at least the box's (a side of 0 is free), aspect ratio
    /// kept. For a caller that crops or resamples afterwards (a thumbnail that fills its box):
    /// JPEG's DCT scaling and WebP's scaler make the decode cheaper, and the last resample still
    /// has every pixel it needs. `maxPixelSize` and `maxPixelCount`, when smaller, win.
    public var fillSize: PixelSize?
    /// With a `fillSize` of two sides: the decoded still image is that box, cut at this anchor
    /// out of the image that fills it (every frame of an animation alike). An image smaller than
    /// the box on a side is kept whole. A JPEG decodes only the rows the box needs; the other
    /// built-in coders cut after decoding, and a load's pipeline cuts what a coder left whole.
    public var fillAnchor: FillAnchor?
    /// Decode only the first frame of an animated image (the result is a still image).
    public var firstFrameOnly: Bool
    /// Decode every frame now instead of on demand in `Image.frame(at:)`.
    public var preloadAllFrames: Bool
    /// Rotate and flip the pixels as the EXIF orientation asks (default); when false the
    /// pixels stay as stored and `Image.exifOrientation` reports the tag.
    public var appliesOrientation: Bool
    /// The largest canvas, in pixels, a decoder accepts (default 100 megapixels). Larger images
    /// fail with `ImageError.tooLarge`, checked from the header before any pixel is allocated.
    public var pixelLimit: Int
    /// The scale factor given to the image (points to pixels), 1 by default.
    public var scale: Double
    /// The colour space of the decoded pixels: `.sRGB` (the default) converts an image whose
    /// profile or colour code points describe another space; `.original` keeps the stored
    /// values and the description on `Image.colorInfo`.
    public var colorSpace: ImageColorSpace
    /// How many bits a channel the decoded pixels keep: `.eight` (the default, `PixelFormat.rgba8`)
    /// or `.source`, which keeps a source of more than 8 bits (a 16-bit PNG) at 16 bits
    /// (`PixelFormat.rgba16`). A decode that also reduces the size, and every transformer, works
    /// in 8 bits (DocC "Formats", "Depth").
    public var bitDepth: ImageBitDepth = .eight
    /// What happens to an HDR (PQ or HLG) image: `.standard` (the default) tone-maps it to SDR
    /// sRGB; `.high` keeps it, deep, with its code points (`ImageDynamicRange`). SDR images
    /// are unaffected.
    public var dynamicRange: ImageDynamicRange = .standard
    /// The page of a document of several (a PDF) to decode, from 0 (the first, the default).
    /// A page past the last fails with `ImageError.undecodable`; single-image formats ignore it.
    public var pageIndex: Int = 0

    /// The default limit on decoded pixels: 100 megapixels.
    public static let defaultPixelLimit = 100_000_000

    /// Decoding options; every argument has the documented default.
    public init(maxPixelSize: Int? = nil, maxPixelCount: Int? = nil, firstFrameOnly: Bool = false, preloadAllFrames: Bool = false,
                appliesOrientation: Bool = true, pixelLimit: Int = ImageDecodingOptions.defaultPixelLimit,
                scale: Double = 1, fillSize: PixelSize? = nil, colorSpace: ImageColorSpace = .sRGB) {
        self.colorSpace = colorSpace
        self.maxPixelSize = maxPixelSize
        self.fillSize = fillSize
        self.maxPixelCount = maxPixelCount
        self.firstFrameOnly = firstFrameOnly
        self.preloadAllFrames = preloadAllFrames
        self.appliesOrientation = appliesOrientation
        self.pixelLimit = pixelLimit
        self.scale = scale
    }

    /// Whether a decode with these options may give less than the whole image stored: a size
    /// limit or fill box (whatever the image's size), or the first frame only. Such an image is
    /// never put into memory under the key of the whole one.
    public var mayReduceImage: Bool {
        maxPixelSize != nil || maxPixelCount != nil || fillSize != nil || firstFrameOnly
    }

    /// Whether `width` x `height` pixels are over `pixelLimit`: a header can claim any size (a
    /// PNG up to 2^32 on each side), and their product must not overflow.
    package func exceedsPixelLimit(width: Int, height: Int) -> Bool {
        let (count, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow || count > pixelLimit
    }

    /// The pixel size a vector document (SVG, a PDF page) of `intrinsic` size is drawn at: as
    /// its own size, or scaled (up too, as a vector image may be) so that its longer side fills
    /// `maxPixelSize`, or to the smallest size that covers `fillSize`; within `maxPixelCount`.
    /// A document without a usable size is drawn as `fallback`.
    package func drawingSize(intrinsic: (Double, Double), fallback: (width: Int, height: Int)) -> (width: Int, height: Int) {
        var (w, h) = intrinsic
        if !(w > 0 && h > 0 && w.isFinite && h.isFinite) { (w, h) = (Double(fallback.width), Double(fallback.height)) }
        var factor = 1.0
        if let limit = maxPixelSize, limit > 0 { factor = Double(limit) / max(w, h) }
        if let fill = fillSize, fill.width > 0 || fill.height > 0 {
            factor = max(fill.width > 0 ? Double(fill.width) / w : 0, fill.height > 0 ? Double(fill.height) / h : 0)
            if let limit = maxPixelSize, limit > 0 { factor = min(factor, Double(limit) / max(w, h)) }
        }
        if let count = maxPixelCount, count > 0, w * h * factor * factor > Double(count) {
            factor = (Double(count) / (w * h)).squareRoot()
        }
        func side(_ length: Double) -> Int {
            let scaled = length * factor
            guard scaled.isFinite, scaled < Double(Int32.max) else { return Int(Int32.max) }
            return max(1, Int((scaled - 1e-9).rounded(.up)))
        }
        return (side(w), side(h))
    }

    /// The size a `width` x `height` image is decoded at under `maxPixelSize` and
    /// `maxPixelCount`, or reduced to fill `fillSize`. A pixel budget is never exceeded: when it is the binding limit both
    /// sides are rounded down (the aspect ratio stays within one pixel).
    /// The fill box is of the upright image: `width` x `height` are the stored canvas, turned
    /// by `exifOrientation` (5 to 8 swap the sides) when the orientation is applied.
    package func targetSize(width: Int, height: Int, exifOrientation: Int? = nil) -> (width: Int, height: Int) {
        var factor = 1.0
        if let limit = maxPixelSize, limit > 0, max(width, height) > limit {
            factor = Double(limit) / Double(max(width, height))
        }
        var budget: Int?
        if let count = maxPixelCount, count > 0, width * height > count {
            let byCount = (Double(count) / Double(width * height)).squareRoot()
            if byCount < factor {
                factor = byCount
                budget = count
            }
        }
        if var fill = fillSize, fill.width > 0 || fill.height > 0 {
            if appliesOrientation, let exifOrientation, (5...8).contains(exifOrientation) { fill = PixelSize(width: fill.height, height: fill.width) }
            let byFill = max(fill.width > 0 ? Double(fill.width) / Double(width) : 0,
                             fill.height > 0 ? Double(fill.height) / Double(height) : 0)
            if byFill < factor {
                // Rounded up (less a hair of floating-point error): the box stays filled.
                func side(_ length: Int) -> Int { min(length, max(1, Int((Double(length) * byFill - 1e-9).rounded(.up)))) }
                return (side(width), side(height))
            }
        }
        guard factor < 1 else { return (width, height) }
        guard let budget else {
            return (max(1, Int((Double(width) * factor).rounded())), max(1, Int((Double(height) * factor).rounded())))
        }
        var w = max(1, Int((Double(width) * factor).rounded(.down)))
        var h = max(1, Int((Double(height) * factor).rounded(.down)))
        // Floating-point error can leave one pixel too many: take it from the longer side.
        while w * h > budget, w > 1 || h > 1 {
            if w >= h { w -= 1 } else { h -= 1 }
        }
        return (w, h)
    }
}

/// How many bits a channel a decode keeps (`ImageDecodingOptions.bitDepth`).
public enum ImageBitDepth: String, Sendable, Hashable, CaseIterable, Codable {
    /// 8 bits a channel, whatever the source holds (the default).
    case eight = "8"
    /// The source's own depth: 16 bits a channel for a source of more than 8.
    case source
}

/// How an `Image` is encoded.
public struct ImageEncodingOptions: Sendable, Equatable {
    /// Quality from 0 (smallest) to 1 (best) for lossy formats (JPEG, lossy WebP, AVIF, HEIC,
    /// JPEG XL); each encoder maps it to its own scale (DocC "Formats" has the table).
    public var quality: Double
    /// Encode losslessly where the format can (WebP, AVIF, HEIC, JPEG XL).
    public var lossless: Bool
    /// Write a progressive JPEG.
    public var progressive: Bool
    /// How hard the encoder works, from 0 (fastest) to 1 (slowest, smallest files), for the
    /// encoders that have such a setting (AVIF speed, JPEG XL effort, HEIC preset; PNG below 0.5
    /// writes its rows unfiltered, as libvips and sharp do, and compresses them with libdeflate); nil leaves each encoder's own
    /// default (for PNG, libpng's adaptive filters).
    public var effort: Double?
    /// Metadata to write into the file: its EXIF block (``ImageMetadata/exifData``, with the
    /// orientation written as 1 when the image's pixels were turned upright) and its XMP packet,
    /// for example a source's, read with ``ImageMetadata/init(reading:)``. Nil (the default)
    /// writes none, as SDWebImage's encoders write none of a source's: a re-encoded file carries
    /// no EXIF, GPS or XMP. The image's ICC profile is written either way. The JPEG, PNG, WebP,
    /// AVIF, HEIC and JPEG XL encoders write it; ``ImageCoders/encode(_:as:options:)`` refuses it for
    /// another format with `ImageError.encodingFailed` rather than dropping it.
    public var metadata: ImageMetadata?
    /// The bits a sample a 16-bit (``PixelFormat/rgba16``) still image is coded in by the
    /// encoders that offer a choice, as sharp's and libvips's `bitdepth`: AVIF and HEIC take 8,
    /// 10 or 12. Nil (the default) is 10, their main profiles' depth, which every decoder reads;
    /// 12 keeps a 12-bit source's precision. An 8-bit image is coded in 8 bits whatever this
    /// says, and PNG, TIFF and JPEG XL write a 16-bit image in 16. AVIF and HEIC refuse another
    /// value with `ImageError.encodingFailed`.
    public var bitsPerSample: Int?

    /// Encoding options: quality 0.9, lossy, baseline, each encoder's default effort, no metadata,
    /// 16-bit images coded in each format's default depth.
    public init(quality: Double = 0.9, lossless: Bool = false, progressive: Bool = false, effort: Double? = nil,
                metadata: ImageMetadata? = nil, bitsPerSample: Int? = nil) {
        self.quality = quality
        self.lossless = lossless
        self.progressive = progressive
        self.effort = effort
        self.metadata = metadata
        self.bitsPerSample = bitsPerSample
    }

    /// The bits a sample a 16-bit image is coded in by an encoder that offers 8, 10 or 12
    /// (``bitsPerSample``, 10 when nil), or nil for a value it cannot write.
    package var deepCodingBits: Int? {
        guard let bits = bitsPerSample else { return 10 }
        return [8, 10, 12].contains(bits) ? bits : nil
    }
}

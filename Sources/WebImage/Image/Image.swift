import Foundation

/// A decoded image: one frame, or an animation whose frames are decoded on demand or up front.
///
/// Pixels are RGBA8 (`Bitmap`). An animated image keeps frame 0 decoded; further frames are
/// composited from the compressed data when `frame(at:)` asks for them (bounded memory: one
/// canvas), unless it was decoded with `preloadAllFrames`. `Image` is a value type and
/// `Sendable`; lazy decoding is serialised internally, so frames can be read from any task.
public struct Image: Sendable {
    /// Width in pixels of the displayed image (after EXIF orientation when applied).
    public var width: Int { content.firstFrame.bitmap.width }
    /// Height in pixels of the displayed image (after EXIF orientation when applied).
    public var height: Int { content.firstFrame.bitmap.height }
    /// The format the image was decoded from (`.unknown` for images built in memory).
    public var format: ImageFormat { content.format }
    /// Points-to-pixels scale factor (1 unless the caller set one).
    public var scale: Double
    /// The colour description of the pixels (ICC profile, CICP): the file's, as its decoder read
    /// it, when decoded with `ImageColorSpace.original` (or when its profile could not be used);
    /// empty when the pixels were converted to sRGB (the default) or the file described none.
    public var colorInfo: ImageColorInfo {
        get { colorBox?.info ?? ImageColorInfo() }
        set { colorBox = newValue.isEmpty ? nil : ColorInfoBox(newValue) }
    }
    /// Number of frames (1 for still images).
    public var frameCount: Int { content.frames.count }
    /// How many times the animation plays: 0 forever, N times; nil for a still image. An
    /// animation whose file declares no loop count (a GIF without a NETSCAPE loop block) plays
    /// once, as browsers play it and as SDWebImage reports it: 1. See `declaredLoopCount`.
    public var loopCount: Int? { content.frames.count > 1 ? (content.loopCount ?? 1) : nil }
    /// The loop count as the file declares it: nil when it has no loop block (or is still).
    public var declaredLoopCount: Int? { content.loopCount }
    /// The orientation tag as stored in the file, if any: EXIF's, else the XMP packet's
    /// `tiff:Orientation` (EXIF wins when both are present).
    public var exifOrientation: Int? { content.exifOrientation }
    /// Whether the EXIF orientation was applied to the pixels.
    public var isOrientationApplied: Bool { content.orientationApplied }
    /// Whether the image has more than one frame.
    public var isAnimated: Bool { content.frames.count > 1 }
    /// Frame durations in seconds, one per frame (0 for still images).
    public var frameDurations: [Double] { content.frames.durations }
    /// The first frame's pixels.
    public var bitmap: Bitmap { content.firstFrame.bitmap }
    /// Bytes of decoded pixels this image holds: every frame when preloaded, else frame 0 and
    /// the one canvas that lazy decoding keeps.
    public var memoryCost: Int { content.frames.memoryCost(firstFrame: content.firstFrame.bitmap.byteCount) }

    /// The decoded content, shared by copies of this image (and found again by the memory
    /// cache's weak table while any copy is alive).
    let content: ImageContent
    /// `colorInfo`, boxed (nil when empty). `ImageColorInfo` holds Foundation's `Data`, whose
    /// layout is not known when this module is compiled; held inline, it made every copy of an
    /// image a call through value witnesses. Boxed, an image is three references wide.
    private var colorBox: ColorInfoBox?
    var firstFrame: ImageFrame { content.firstFrame }
    var frames: FrameStore { content.frames }

    init(content: ImageContent, scale: Double) {
        self.content = content
        self.scale = scale
    }

    /// A still image from one bitmap.
    public init(bitmap: Bitmap, format: ImageFormat = .unknown, scale: Double = 1) {
        self.init(frames: [ImageFrame(bitmap: bitmap)], loopCount: nil, format: format, scale: scale)
    }

    /// An image from frames that all have the same size (an animation when there are several).
    public init(frames: [ImageFrame], loopCount: Int? = 0, format: ImageFormat = .unknown, scale: Double = 1) {
        precondition(!frames.isEmpty, "an image needs at least one frame")
        self.init(firstFrame: frames[0], frames: .preloaded(frames), format: format,
                  loopCount: frames.count > 1 ? loopCount : nil, scale: scale,
                  exifOrientation: nil, orientationApplied: false)
    }

    package init(firstFrame: ImageFrame, frames: FrameStore, format: ImageFormat, loopCount: Int?, scale: Double,
                 exifOrientation: Int?, orientationApplied: Bool) {
        self.content = ImageContent(firstFrame: firstFrame, frames: frames, format: format, loopCount: loopCount,
                                    exifOrientation: exifOrientation, orientationApplied: orientationApplied)
        self.scale = scale
    }

    /// This image as a decode with `options` gives it: a still of the first frame when
    /// `options.firstFrameOnly` and the image is animated, else the image itself. A memory hit
    /// answers a query with it, as a disk hit decoded with the same options would look.
    func matching(_ options: ImageDecodingOptions) -> Image {
        guard options.firstFrameOnly, isAnimated else { return self }
        var still = Image(firstFrame: firstFrame, frames: .preloaded([firstFrame]), format: format, loopCount: nil, scale: scale,
                          exifOrientation: exifOrientation, orientationApplied: isOrientationApplied)
        still.colorInfo = colorInfo
        return still
    }

    /// Decodes `data` with the shared coders (`ImageCoders.shared`).
    /// - Throws: `ImageError` when the data is empty, unknown, corrupt, truncated or too large.
    public init(data: Data, options: ImageDecodingOptions = .init()) throws {
        self = try ImageCoders.shared.decode(data, options: options)
    }

    /// Reads and decodes a file with the shared coders. Blocking file I/O: call it off the
    /// cooperative thread pool for large files.
    /// - Throws: `ImageError.unreadableFile` or a decoding error.
    public init(contentsOf url: URL, options: ImageDecodingOptions = .init()) throws {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ImageError.unreadableFile(path: url.path, reason: (error as NSError).localizedDescription)
        }
        try self.init(data: data, options: options)
    }

    /// Frame `index`, composited onto the full canvas. Decodes it now if it is not in memory.
    /// - Throws: `ImageError.frameOutOfRange`, or `ImageError.undecodable` when a lazily
    ///   decoded frame turns out to be corrupt.
    public func frame(at index: Int) throws -> ImageFrame {
        guard index >= 0, index < frames.count else { throw ImageError.frameOutOfRange(index: index, count: frames.count) }
        if index == 0 { return firstFrame }
        return try frames.frame(at: index)
    }

    /// Every frame, decoding those not yet in memory.
    public func allFrames() throws -> [ImageFrame] {
        try (0..<frameCount).map { try frame(at: $0) }
    }

    /// The image with every frame decoded and held in memory.
    public func preloaded() throws -> Image {
        if case .preloaded = frames { return self }
        return Image(firstFrame: firstFrame, frames: .preloaded(try allFrames()), format: format,
                     loopCount: loopCount, scale: scale, exifOrientation: exifOrientation,
                     orientationApplied: isOrientationApplied)
    }

    /// Encodes the image with the shared coders. `format` defaults to the source format, or PNG
    /// when that is not encodable. Animated images keep their frames in GIF and WebP.
    /// - Throws: `ImageError.encodingFailed`.
    public func encoded(as format: ImageFormat? = nil, quality: Double = 0.9) throws -> Data {
        let target = format ?? (self.format.isDecodable ? self.format : .png)
        return try ImageCoders.shared.encode(self, as: target, options: ImageEncodingOptions(quality: quality))
    }
}

/// The immutable decoded content of an `Image`.
final class ImageContent: Sendable {
    let firstFrame: ImageFrame
    let frames: FrameStore
    let format: ImageFormat
    let loopCount: Int?
    let exifOrientation: Int?
    let orientationApplied: Bool

    init(firstFrame: ImageFrame, frames: FrameStore, format: ImageFormat, loopCount: Int?, exifOrientation: Int?,
         orientationApplied: Bool) {
        self.firstFrame = firstFrame
        self.frames = frames
        self.format = format
        self.loopCount = loopCount
        self.exifOrientation = exifOrientation
        self.orientationApplied = orientationApplied
    }
}

/// Where an image's frames live: all in memory, or behind a lazy renderer.
package enum FrameStore: Sendable {
    case preloaded([ImageFrame])
    case lazy(LazyFrames)

    var count: Int {
        switch self {
        case .preloaded(let frames): frames.count
        case .lazy(let lazy): lazy.durations.count
        }
    }

    var durations: [Double] {
        switch self {
        case .preloaded(let frames): frames.map(\.duration)
        case .lazy(let lazy): lazy.durations
        }
    }

    func frame(at index: Int) throws -> ImageFrame {
        switch self {
        case .preloaded(let frames): frames[index]
        case .lazy(let lazy): ImageFrame(bitmap: try lazy.bitmap(at: index), duration: lazy.durations[index])
        }
    }

    func memoryCost(firstFrame: Int) -> Int {
        switch self {
        case .preloaded(let frames): frames.reduce(0) { $0 + $1.bitmap.byteCount }
        case .lazy(let lazy): firstFrame * 2 + lazy.retainedCost
        }
    }
}

/// An image's colour description, shared by its copies (see `Image.colorInfo`).
private final class ColorInfoBox: Sendable {
    let info: ImageColorInfo

    init(_ info: ImageColorInfo) { self.info = info }
}

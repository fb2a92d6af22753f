import Foundation

/// Decodes an image from data that arrives in pieces, and shows the best image so far.
///
/// Feed every chunk to `append(_:)` in order; ask `preview()` when a progressive frame is
/// wanted; call `finish()` once all data has arrived. The JPEG decoder decodes each byte once
/// and `finish()` returns the image from its state; the PNG and WebP decoders do so for still
/// images; animations (APNG, GIF, animated WebP) are decoded whole at the end. A decoder is used by one task at
/// a time (it is not `Sendable`).
public protocol IncrementalImageDecoder: AnyObject {
    /// Adds the next bytes of the image.
    /// - Throws: `ImageError` as soon as the data is known to be corrupt or too large.
    func append(_ data: Data) throws
    /// The best image that the data so far gives, or nil when nothing new can be shown since the
    /// last preview (no new rows, pass, scan or frame: deciding that costs a few comparisons) and,
    /// for JPEG and still PNG and WebP, once every byte is in (the final image would be the same).
    /// Previews are never cached; they may have fewer frames and lower quality than the final image.
    func preview() throws -> PartialImage?
    /// The complete image from all appended data.
    /// - Throws: `ImageError` when the data is corrupt or incomplete.
    func finish() throws -> Image
}

/// A progressive preview: the image decoded so far and how far it got.
public struct PartialImage: Sendable {
    /// The preview image (full size; rows not yet received are transparent or grey).
    public var image: Image
    /// Rows of the final image that hold real data (all rows for a progressive JPEG scan).
    public var rowsDecoded: Int
    /// Progressive JPEG scans or interlaced PNG passes received so far (0 when not applicable).
    public var scans: Int
    /// A preview of `image` whose first `rowsDecoded` rows hold real data, after `scans` passes.
    public init(image: Image, rowsDecoded: Int, scans: Int) {
        self.image = image
        self.rowsDecoded = rowsDecoded
        self.scans = scans
    }

    /// `rowsDecoded` as a fraction of the height.
    public var fractionDecoded: Double { image.height > 0 ? Double(rowsDecoded) / Double(image.height) : 0 }
}

/// Shared plumbing of the incremental decoders: the bytes received so far.
class AccumulatingDecoder {
    var data = Data()
    var previewedCount = 0
    let options: ImageDecodingOptions

    init(options: ImageDecodingOptions) { self.options = options }

    /// Whether new bytes arrived since the last preview.
    var hasNewData: Bool { data.count != previewedCount }
}

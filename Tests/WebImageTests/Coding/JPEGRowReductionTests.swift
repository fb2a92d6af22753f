import CWebImageCodecs
import Foundation
import Testing
@testable import WebImage

/// A JPEG decoded at size has its rows area-reduced as libjpeg gives them, after the DCT scale:
/// the pixels are those of the same DCT scale decoded whole and reduced afterwards, without the
/// scaled image in memory at once. CMYK with a profile (inks) is decoded whole, as before.
@Suite struct JPEGRowReductionTests {
    /// The decode at `scale`/8 with no reduction, then `areaDownscaled`: the reference.
    static func wholeThenReduced(_ data: Data, scale: Int32, width: Int, height: Int, tolerate: Bool = false) throws
        -> (bitmap: Bitmap, rows: UInt32) {
        var out = wi_image()
        let status = data.withBytePointer { wi_jpeg_decode($0, $1, scale, 0, 0, 0, 0, tolerate ? 1 : 0, 1 << 40, 0, nil, &out) }
        #expect(status == WI_OK)
        let whole = try #require(CodecBridge.takeBitmap(&out))
        return (whole.areaDownscaled(toWidth: width, height: height), out.rows_decoded * UInt32(height) / UInt32(whole.height))
    }

    static func encoded(width: Int, height: Int, quality: Double = 0.9) throws -> Data {
        var options = ImageEncodingOptions()
        options.quality = quality
        return try ImageCoders.shared.encode(Image(bitmap: PNGRowReductionTests.bitmap(width: width, height: height)),
                                             as: .jpeg, options: options)
    }

    @Test(arguments: [(1600, 1200, 256), (997, 601, 300), (1000, 3, 100), (37, 1000, 10), (640, 480, 639), (300, 200, 1), (2000, 1500, 700)])
    func rowsReducedAsDecodedEqualAWholeDecodeReduced(_ width: Int, _ height: Int, _ limit: Int) throws {
        let data = try Self.encoded(width: width, height: height)
        let options = ImageDecodingOptions(maxPixelSize: limit)
        let image = try Image(data: data, options: options)
        #expect(max(image.width, image.height) == limit)
        let scale = JPEGCoder.dctScale(width: width, height: height, options: options)
        let reference = try Self.wholeThenReduced(data, scale: scale, width: image.width, height: image.height)
        #expect(image.bitmap == reference.bitmap, "\(width)x\(height) to \(limit) at \(scale)/8")
    }

    /// The decoder's own answer: reduced only to a size no larger than the scaled one, and not
    /// for inks or a conversion on the rows.
    @Test func theDecoderReducesOnlyWhatItCan() throws {
        let data = try Self.encoded(width: 400, height: 300)
        func size(scale: Int32, _ width: UInt32, _ height: UInt32, inks: Int32 = 0) -> (Int, Int, Int) {
            var out = wi_image()
            let status = data.withBytePointer { wi_jpeg_decode($0, $1, scale, width, height, 0, 0, 0, 1 << 40, inks, nil, &out) }
            defer { free(out.pixels) }
            return (Int(out.width), Int(out.height), Int(status))
        }
        #expect(size(scale: 8, 40, 30) == (40, 30, WI_OK))
        #expect(size(scale: 2, 40, 30) == (40, 30, WI_OK))
        // Larger than the scaled size (100 x 75) in one direction: decoded whole.
        #expect(size(scale: 2, 101, 30) == (100, 75, WI_OK))
        #expect(size(scale: 2, 100, 75) == (100, 75, WI_OK))
        #expect(size(scale: 8, 40, 0).2 == WI_ERR_ARGUMENT)
        // An RGB file with cmyk_inks asked: still RGB, so still reduced.
        #expect(size(scale: 8, 40, 30, inks: 1) == (40, 30, WI_OK))
    }

    /// A CMYK JPEG (naive conversion, no profile) is converted row by row and then reduced.
    @Test func aCMYKJPEGAtSizeEqualsItsWholeDecodeReduced() throws {
        let data = try Corpus.data("jpeg/cymk.jpg")
        let info = try Image(data: data)
        let options = ImageDecodingOptions(maxPixelSize: 37)
        var raw = options
        raw.colorSpace = .original
        let image = try Image(data: data, options: raw)
        let scale = JPEGCoder.dctScale(width: info.width, height: info.height, options: raw)
        #expect(image.bitmap == (try Self.wholeThenReduced(data, scale: scale, width: image.width, height: image.height)).bitmap)
    }

    /// The EXIF orientation is applied after the reduction, as for a whole decode.
    @Test(arguments: [6, 3])
    func anOrientedJPEGAtSizeIsReducedThenTurned(_ value: Int) throws {
        let data = try Corpus.data("jpeg/hopper_orientation_\(value).jpg")
        let image = try Image(data: data, options: ImageDecodingOptions(maxPixelSize: 29))
        #expect(max(image.width, image.height) == 29)
        var stored = ImageDecodingOptions(maxPixelSize: 29)
        stored.appliesOrientation = false
        let reduced = try Image(data: data, options: stored)
        let whole = try Image(data: data, options: { var o = ImageDecodingOptions(); o.appliesOrientation = false; return o }())
        let scale = JPEGCoder.dctScale(width: whole.width, height: whole.height, options: stored)
        #expect(reduced.bitmap == (try Self.wholeThenReduced(data, scale: scale, width: reduced.width, height: reduced.height)).bitmap)
        #expect(image.bitmap == reduced.bitmap.oriented(try #require(ExifOrientation(rawValue: value))))
    }

    /// A baseline file cut short, decoded with truncation tolerated (a preview): the rows it
    /// reports as real are those of the whole decode's real rows, reduced.
    @Test func aTruncatedJPEGReportsItsRealRowsAtSize() throws {
        let data = try Self.encoded(width: 800, height: 600)
        let cut = data.prefix(data.count * 2 / 5)
        var out = wi_image()
        let status = cut.withBytePointer { wi_jpeg_decode($0, $1, 8, 200, 150, 0, 0, 1, 1 << 40, 0, nil, &out) }
        #expect(status == WI_OK)
        let bitmap = try #require(CodecBridge.takeBitmap(&out))
        let reference = try Self.wholeThenReduced(cut, scale: 8, width: 200, height: 150, tolerate: true)
        #expect(bitmap == reference.bitmap)
        #expect(out.rows_decoded == reference.rows)
        #expect(out.rows_decoded > 0 && out.rows_decoded < 150)
        // Not tolerated: the typed failure, at size as whole.
        #expect(throws: ImageError.self) { try Image(data: cut, options: ImageDecodingOptions(maxPixelSize: 200)) }
    }
}

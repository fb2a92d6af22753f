import CWebImageCodecs
import Foundation
import Testing
@testable import WebImage

/// A fill box cut out as the image is decoded (`ImageDecodingOptions.fillAnchor`): the same pixels
/// as the box cut afterwards out of the image that fills it, whether the JPEG decoder made only
/// the rows of the box, or the box was cut after the decode (other formats, an orientation).
@Suite struct FillAnchorTests {
    /// 1000x750: decoded at 4/8 (500x375) and reduced as the rows come.
    static let photo: Data = {
        let image = Image(bitmap: Fixtures.gradient(width: 1000, height: 750, opaque: true))
        return try! image.encoded(as: .jpeg, quality: 0.9)
    }()
    static let anchors = [FillAnchor(x: 0, y: 0), .center, FillAnchor(x: 1, y: 1), FillAnchor(x: 0.25, y: 0.8)]

    /// `data` decoded with a fill box and `anchor`, against the same decode without the anchor
    /// and the box cut from it afterwards: equal bytes, the box's size.
    func expectCut(_ data: Data, box: PixelSize, anchor: FillAnchor, _ note: String) throws {
        var options = ImageDecodingOptions(fillSize: box)
        let whole = try Image(data: data, options: options)
        options.fillAnchor = anchor
        let cut = try Image(data: data, options: options)
        let reference = try #require(anchor.cut(box, width: whole.width, height: whole.height), "\(note): the fill is larger than the box")
        #expect(cut.width == box.width && cut.height == box.height, "\(note)")
        let expected = try CroppingTransformer(x: Double(reference.x), y: Double(reference.y), width: Double(box.width),
                                               height: Double(box.height)).transform(whole.bitmap)
        // Compared first: an expectation on two large arrays would list every difference.
        let same = cut.bitmap.rgba == expected.rgba
        #expect(same, "\(note): anchor \(anchor)")
    }

    @Test func aJPEGMakesOnlyTheRowsOfTheBoxAndTheyAreTheWholeDecodesRows() throws {
        // A wide box: the fill is 300x225, and the rows of a 300x100 band are cut.
        for anchor in Self.anchors {
            try expectCut(Self.photo, box: PixelSize(width: 300, height: 100), anchor: anchor, "wide box")
            // A tall box: 200x150 fills 100x150, the columns are cut (after the decode).
            try expectCut(Self.photo, box: PixelSize(width: 100, height: 150), anchor: anchor, "tall box")
        }
        // At full scale (no DCT scaling), and a band of one row.
        try expectCut(Self.photo, box: PixelSize(width: 900, height: 300), anchor: .center, "full scale")
        try expectCut(Self.photo, box: PixelSize(width: 640, height: 1), anchor: FillAnchor(x: 0.5, y: 1), "one row")
    }

    @Test func theBandIsMadeInCAsTheWholeReductionsRows() throws {
        // Straight through the C decoder: each band equals those rows of the whole reduction.
        var out = wi_image()
        let status = Self.photo.withBytePointer { wi_jpeg_decode($0, $1, 4, 300, 225, 0, 0, 0, 1 << 40, 0, nil, &out) }
        #expect(status == WI_OK)
        let whole = try #require(CodecBridge.takeBitmap(&out)).rgba
        #expect(whole.count == 300 * 225 * 4)
        for (top, rows) in [(0, 1), (0, 225), (62, 100), (124, 101), (224, 1), (10, 7)] {
            var band = wi_image()
            let status = Self.photo.withBytePointer { wi_jpeg_decode($0, $1, 4, 300, 225, UInt32(top), UInt32(rows), 0, 1 << 40, 0, nil, &band) }
            #expect(status == WI_OK && band.rows_decoded == UInt32(rows))
            let bitmap = try #require(CodecBridge.takeBitmap(&band))
            #expect(bitmap.width == 300 && bitmap.height == rows)
            let same = bitmap.rgba == Array(whole[top * 1200..<(top + rows) * 1200])
            #expect(same, "rows \(top) + \(rows)")
        }
        // A band outside the reduced image, or without a reduction, is refused.
        for (width, height, top, rows) in [(300, 225, 200, 26), (300, 225, 226, 1), (0, 0, 0, 10)] as [(UInt32, UInt32, UInt32, UInt32)] {
            var out = wi_image()
            let status = Self.photo.withBytePointer { wi_jpeg_decode($0, $1, 4, width, height, top, rows, 0, 1 << 40, 0, nil, &out) }
            #expect(status == WI_ERR_ARGUMENT)
        }
    }

    @Test func otherFormatsAndOrientedJPEGsAreCutAfterTheDecode() throws {
        let png = try Image(bitmap: Fixtures.gradient(width: 640, height: 480, opaque: false)).encoded(as: .png)
        for anchor in Self.anchors {
            try expectCut(png, box: PixelSize(width: 200, height: 50), anchor: anchor, "png")
        }
        // Orientation 6: the box is of the upright image, cut after turning it.
        let oriented = try Corpus.data("jpeg/hopper_orientation_6.jpg")
        try expectCut(oriented, box: PixelSize(width: 40, height: 10), anchor: FillAnchor(x: 0, y: 1), "oriented")
    }

    @Test func anImageSmallerThanTheBoxOnASideIsKeptWhole() throws {
        let small = try Image(bitmap: Fixtures.gradient(width: 200, height: 100, opaque: true)).encoded(as: .jpeg)
        var options = ImageDecodingOptions(fillSize: PixelSize(width: 300, height: 50))
        options.fillAnchor = .center
        let image = try Image(data: small, options: options)
        #expect(image.width == 200 && image.height == 100)
        // A free side: no box to cut.
        options.fillSize = PixelSize(width: 100, height: 0)
        let free = try Image(data: Self.photo, options: options)
        #expect(free.width == 100 && free.height == 75)
        #expect(FillAnchor(x: 7, y: .nan) == FillAnchor(x: 1, y: 0.5), "clamped, and the middle for what is not a number")
    }
}

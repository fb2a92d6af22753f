import CWebImageCodecs
import Foundation
import Testing
@testable import WebImage

/// A PNG decoded at size has its rows reduced as libpng inflates them (the full-size pixels
/// never exist) when that gives exactly what decoding it whole and reducing after would: an
/// opaque 8-bit image, not interlaced. Every other PNG is decoded whole, as before.
@Suite struct PNGRowReductionTests {
    /// `width` x `height` pixels of noise over a gradient, so that any change in how the rows
    /// are summed or rounded shows; with `alpha`, a varying alpha channel.
    static func bitmap(width: Int, height: Int, alpha: Bool = false) -> Bitmap {
        var state: UInt32 = 0x9E37_79B9
        var bytes: [UInt8] = []
        bytes.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 1_664_525 &+ 1_013_904_223
                let noise = Int(state >> 27)
                bytes += [UInt8((x * 255 / max(1, width - 1) + noise) & 255), UInt8((y * 255 / max(1, height - 1) + noise) & 255),
                          UInt8(truncatingIfNeeded: state >> 8), alpha ? UInt8(truncatingIfNeeded: state >> 16) : 255]
            }
        }
        return Bitmap(width: width, height: height, rgba: bytes)
    }

    /// What a whole decode gives, reduced by `areaDownscaled` to the size the decode chose.
    static func wholeThenReduced(_ data: Data, like reduced: Image) throws -> Bitmap {
        try Image(data: data).bitmap.areaDownscaled(toWidth: reduced.width, height: reduced.height)
    }

    /// Each output pixel as the exact coverage-weighted mean of the source pixels under it
    /// (double precision, opaque), for any ratio: the reference the row-at-a-time reducer is
    /// held to, rows that straddle two output rows included.
    static func exactMean(_ source: Bitmap, width: Int, height: Int) -> [Double] {
        func spans(_ from: Int, _ to: Int) -> [[(index: Int, weight: Double)]] {
            let ratio = Double(from) / Double(to)
            return (0..<to).map { t in
                let lo = Double(t) * ratio, hi = Double(t + 1) * ratio
                return (Int(lo)..<min(from, Int(hi.rounded(.up)))).compactMap { s in
                    let cover = min(hi, Double(s + 1)) - max(lo, Double(s))
                    return cover > 0 ? (s, cover / ratio) : nil
                }
            }
        }
        let columns = spans(source.width, width), rows = spans(source.height, height)
        var out: [Double] = []
        for row in rows {
            for column in columns {
                for c in 0..<3 {
                    var sum = 0.0
                    for (y, wy) in row {
                        for (x, wx) in column {
                            let p = source[x, y]
                            sum += wx * wy * Double([p.r, p.g, p.b][c])
                        }
                    }
                    out.append(sum)
                }
            }
        }
        return out
    }

    @Test(arguments: [(997, 601, 300, 181), (640, 480, 639, 479), (50, 1000, 7, 3)])
    func rowsAreAveragedByTheirCoverage(_ width: Int, _ height: Int, _ toWidth: Int, _ toHeight: Int) {
        let source = Self.bitmap(width: width, height: height)
        let reference = Self.exactMean(source, width: toWidth, height: toHeight)
        let reduced = source.areaDownscaled(toWidth: toWidth, height: toHeight)
        var worst = 0.0
        for y in 0..<toHeight {
            for x in 0..<toWidth {
                let p = reduced[x, y], base = (y * toWidth + x) * 3
                for (c, value) in [p.r, p.g, p.b].enumerated() { worst = max(worst, abs(Double(value) - reference[base + c])) }
            }
        }
        // Opaque rows are summed in 16-bit fixed point: each product is cut to 1/256 of a level
        // (the mean loss added back), so a value may round the other way from the exact mean
        // when that lies within a few hundredths of a half: more often the more rows and
        // columns an output pixel covers (333 rows here at most).
        #expect(worst <= 0.6, "largest difference \(worst)")
    }

    @Test(arguments: [(1600, 1200, 256), (997, 601, 300), (1000, 3, 100), (37, 1000, 10), (640, 480, 639), (300, 200, 1)])
    func rowsReducedAsInflatedEqualAWholeDecodeReduced(_ width: Int, _ height: Int, _ limit: Int) throws {
        let data = try ImageCoders.shared.encode(Image(bitmap: Self.bitmap(width: width, height: height)), as: .png)
        let image = try Image(data: data, options: ImageDecodingOptions(maxPixelSize: limit))
        #expect(max(image.width, image.height) == limit)
        #expect(image.bitmap == (try Self.wholeThenReduced(data, like: image)), "\(width)x\(height) to \(limit)")
    }

    /// The decoder's own answer: at the size asked for an opaque 8-bit PNG, at full size for one
    /// with alpha (whose averaging is premultiplied unless every pixel turns out opaque).
    @Test func onlyAnOpaqueEightBitPNGIsReducedWhileInflated() throws {
        func taken(_ bitmap: Bitmap) throws -> (Int, Int) {
            let data = try ImageCoders.shared.encode(Image(bitmap: bitmap), as: .png)
            let decoder = try #require(wi_png_decoder_create(1 << 40))
            defer { wi_png_decoder_destroy(decoder) }
            wi_png_decoder_reduce_to(decoder, 40, 30)
            #expect(data.withBytePointer { wi_png_decoder_push(decoder, $0, $1) } == WI_OK)
            var out = wi_image()
            #expect(wi_png_decoder_take(decoder, &out) == WI_OK)
            let bitmap = try #require(CodecBridge.takeBitmap(&out))
            return (bitmap.width, bitmap.height)
        }
        #expect(try taken(Self.bitmap(width: 400, height: 300)) == (40, 30))
        #expect(try taken(Self.bitmap(width: 400, height: 300, alpha: true)) == (400, 300))
        // Not larger than the size in either direction: decoded whole.
        #expect(try taken(Self.bitmap(width: 40, height: 30)) == (40, 30))
        #expect(try taken(Self.bitmap(width: 30, height: 300)) == (30, 300))
    }

    @Test func aPNGWithAlphaAtSizeIsUnchanged() throws {
        let data = try ImageCoders.shared.encode(Image(bitmap: Self.bitmap(width: 400, height: 300, alpha: true)), as: .png)
        let image = try Image(data: data, options: ImageDecodingOptions(maxPixelSize: 64))
        #expect(image.width == 64 && image.height == 48)
        #expect(image.bitmap == (try Self.wholeThenReduced(data, like: image)))
    }

    /// PngSuite's 32x32 RGB image plain and Adam7-interlaced: the first is reduced while
    /// inflated, the second whole, and they agree.
    @Test func anInterlacedPNGIsDecodedWholeAndAgrees() throws {
        let options = ImageDecodingOptions(maxPixelSize: 20)
        let plain = try Image(data: try Corpus.data("png/basn2c08.png"), options: options)
        let interlaced = try Image(data: try Corpus.data("png/basi2c08.png"), options: options)
        #expect(plain.width == 20 && plain.height == 20)
        #expect(plain.bitmap == interlaced.bitmap)
    }

    @Test func aSixteenBitPNGKeptDeepAtSizeIsUnchanged() throws {
        var deep = ImageDecodingOptions(maxPixelSize: 16)
        deep.bitDepth = .source
        let data = try Corpus.data("png/basn2c16.png")
        let image = try Image(data: data, options: deep)
        var whole = ImageDecodingOptions()
        whole.bitDepth = .source
        #expect(image.bitmap == (try Image(data: data, options: whole)).bitmap.areaDownscaled(toWidth: 16, height: 16))
    }

    @Test func truncatedRowsFailAtSizeAsWhole() throws {
        let data = try ImageCoders.shared.encode(Image(bitmap: Self.bitmap(width: 400, height: 300)), as: .png)
        let cut = data.prefix(data.count / 2)
        #expect(throws: ImageError.self) { try Image(data: cut, options: ImageDecodingOptions(maxPixelSize: 64)) }
        // Every row there but IEND missing: shown, as browsers do, at size too.
        let noEnd = data.prefix(data.count - 12)
        let image = try Image(data: noEnd, options: ImageDecodingOptions(maxPixelSize: 64))
        #expect(image.bitmap == (try Self.wholeThenReduced(data, like: image)))
    }
}

import CWebImageCodecs
import Foundation
import Testing
@testable import WebImage

/// At 1/8 scale a progressive JPEG's components that come out one pixel a block read only their
/// DC coefficients, so their AC scans are dropped before libjpeg decodes them. The pixels must
/// be those of the whole file decoded at 1/8: the reference is the same decode with truncation
/// tolerated, which reads every scan (a file that may be cut short is never shortened).
@Suite struct JPEGScanSkippingTests {
    /// The strict and the tolerant decode at `scale`/8, with the scans each read.
    static func bothDecodes(_ data: Data, scale: Int32 = 1) -> (strict: (Int32, Bitmap?, UInt32), whole: (Int32, Bitmap?, UInt32)) {
        func decode(tolerate: Int32) -> (Int32, Bitmap?, UInt32) {
            var out = wi_image()
            let status = data.withBytePointer { wi_jpeg_decode($0, $1, scale, 0, 0, 0, 0, tolerate, 1 << 40, 0, nil, &out) }
            let scans = out.scans
            return (status, CodecBridge.takeBitmap(&out), scans)
        }
        return (decode(tolerate: 0), decode(tolerate: 1))
    }

    static func progressive(width: Int, height: Int) throws -> Data {
        try ImageCoders.shared.encode(Image(bitmap: PNGRowReductionTests.bitmap(width: width, height: height)), as: .jpeg,
                                      options: ImageEncodingOptions(quality: 0.9, progressive: true))
    }

    /// Every JPEG of the corpus (progressive ones of every subsampling, grey, missing and
    /// partial scans, fill bytes, restart markers): where the strict decode at 1/8 succeeds, its
    /// pixels are the whole file's; and the progressive ones did skip scans.
    @Test func everyCorpusJPEGAtAnEighthHasTheWholeFilesPixels() throws {
        let folder = Corpus.directory.appendingPathComponent("jpeg")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".jpeg") }.sorted()
        var compared = 0
        var skipped: [String] = []
        for name in names {
            let (strict, whole) = Self.bothDecodes(try Data(contentsOf: folder.appendingPathComponent(name)))
            guard strict.0 == WI_OK else { continue }
            #expect(whole.0 == WI_OK, "\(name)")
            #expect(strict.1 == whole.1, "\(name)")
            if strict.2 < whole.2 { skipped.append(name) }
            compared += 1
        }
        #expect(compared > 50)
        // 4:2:0 (chroma kept at 2x2, so its AC scans stay) and grey progressive files.
        for name in ["progressive.jpeg", "tower_progressive.jpg", "down_sampled_grayscale_prog.jpg"] {
            #expect(skipped.contains(name), "\(name) skipped no scan")
        }
    }

    /// The whole route: a progressive photo-like image at a size that takes 1/8, reduced as the
    /// rows come and cut to a fill band, equals the whole file at 1/8 reduced afterwards.
    @Test(arguments: [(1600, 1200, 150), (997, 601, 64), (2000, 1500, 240)])
    func aProgressiveJPEGAtAnEighthReducedEqualsItsWholeDecodeReduced(_ width: Int, _ height: Int, _ limit: Int) throws {
        let data = try Self.progressive(width: width, height: height)
        let options = ImageDecodingOptions(maxPixelSize: limit)
        #expect(JPEGCoder.dctScale(width: width, height: height, options: options) == 1)
        let image = try Image(data: data, options: options)
        let reference = try JPEGRowReductionTests.wholeThenReduced(data, scale: 1, width: image.width, height: image.height,
                                                                    tolerate: true)
        #expect(image.bitmap == reference.bitmap)
        let (strict, whole) = Self.bothDecodes(data)
        #expect(strict.2 < whole.2)
    }

    /// Only the scale that reads DC alone drops scans.
    @Test func otherScalesReadEveryScan() throws {
        let data = try Self.progressive(width: 640, height: 480)
        for scale: Int32 in [2, 4, 8] {
            let (strict, whole) = Self.bothDecodes(data, scale: scale)
            #expect(strict.2 == whole.2 && strict.1 == whole.1)
        }
    }

    /// Files the copy must not be made from decode as before: cut short, and over the scan limit.
    @Test func truncatedAndOverLongFilesAreLeftToLibjpeg() throws {
        let data = try Self.progressive(width: 640, height: 480)
        let small = ImageDecodingOptions(maxPixelSize: 40)
        #expect(throws: ImageError.self) { try JPEGCoder().decode(data.prefix(data.count * 2 / 3), options: small) }
        #expect(throws: ImageError.undecodable(.jpeg, reason: "more than 500 scans")) {
            try JPEGCoder().decode(try JPEGScanLimitTests.manyScans(extra: 491), options: small)
        }
        _ = try JPEGCoder().decode(try JPEGScanLimitTests.manyScans(extra: 490), options: small)
    }
}

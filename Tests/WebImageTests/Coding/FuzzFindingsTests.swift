import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageJXL

/// Every input a fuzzer found a problem with (`scripts/fuzz.sh` copies them to
/// `Tests/WebImageTests/Fixtures/FuzzFindings`), replayed through every coder, whole and in
/// pieces, as the fuzz targets decode them: each must give an image or an `ImageError`.
@Suite struct FuzzFindingsTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/FuzzFindings")

    static var findings: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    @Test func thereAreFindingsToReplay() {
        #expect(!Self.findings.isEmpty, "the folder of findings is missing")
    }

    @Test(arguments: findings)
    func everyFindingDecodesOrFailsWithImageError(name: String) throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent(name))
        let options = ImageDecodingOptions(pixelLimit: 4_000_000)
        let coders: [any ImageCoder] = [PNGCoder(), JPEGCoder(), WebPCoder(), GIFCoder(), AVIFCoder(), HEIFCoder(), JXLCoder()]
        for format in [ImageFormat.jpeg, .png, .webp, .gif] {
            _ = ImageMetadata.stripped(data, format: format, keepingCopyright: true)
        }
        for coder in coders {
            do { _ = try coder.decode(data, options: options) } catch is ImageError {} catch { Issue.record("\(name): \(error)") }
            guard let decoder = coder.makeIncrementalDecoder(options: options) else { continue }
            do {
                var offset = 0
                while offset < data.count {
                    let end = min(data.count, offset + 97)
                    try decoder.append(data[offset..<end])
                    _ = try decoder.preview()
                    offset = end
                }
                _ = try decoder.finish()
            } catch is ImageError {} catch { Issue.record("\(name) streamed: \(error)") }
        }
    }

    /// The HEIF fuzzer's first finding: a 1,868-byte HEIC whose grid item declares a
    /// 26724x27762 canvas (its ispe says 64x48) made libheif allocate 4.4 GB before failing. The
    /// grid's own size is read from the boxes and refused before libheif sees the file.
    /// The second: a 67x45 grid whose tile is an overlay item declaring a 28776x25961 canvas
    /// (2.2 GB): every derived item's canvas is checked, not only the primary's.
    @Test func aGridCanvasOverThePixelLimitIsRefusedBeforeLibheifAllocatesIt() throws {
        for (name, size) in [("heif-oom-6daca266d6a228587f63cdd193c4a01fa8ba6e0c", (26724, 27762)),
                             ("heif-oom-019976e0d5ca6b25db997317bb2e9a619d01d677", (28776, 25961))] {
            let data = try Data(contentsOf: Self.directory.appendingPathComponent(name))
            do {
                _ = try HEIFCoder().decode(data, options: .init())
                Issue.record("\(name) decoded")
            } catch let error as ImageError {
                guard case .tooLarge(let width, let height, _) = error else { Issue.record("\(name): \(error)"); continue }
                #expect(width == size.0 && height == size.1, "\(name)")
            }
        }
        // The third: a grid whose description in idat runs past the box (libheif read 3.3 GB
        // worth of canvas out of what lay beyond): refused as corrupt.
        let outside = try Data(contentsOf: Self.directory.appendingPathComponent("heif-oom-94b4022ed0f6af499f0c1aa77f60b4054ae85625"))
        #expect(throws: ImageError.self) { _ = try HEIFCoder().decode(outside, options: .init()) }
        // An image just under the limit still decodes (67x45 = 3,015 pixels).
        let small = try HEIFCoder().decode(try ModernCorpus.data("heic/8bit_420_q70.heic"), options: .init(pixelLimit: 4000))
        #expect(small.width == 67)
    }

    /// The first finding: a PNG header claiming 2^32-ish on each side overflowed the pixel
    /// count's multiplication (a trap) before the limit check could refuse it.
    @Test func aHeaderOfHugeSidesIsRefusedNotATrap() {
        let options = ImageDecodingOptions()
        #expect(options.exceedsPixelLimit(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF))
        #expect(options.exceedsPixelLimit(width: Int.max, height: 2))
        #expect(!options.exceedsPixelLimit(width: 1000, height: 1000))
        #expect(throws: ImageError.self) { try PNGCoder().decode(Fixtures.pngHeader(width: 0xFFFF_FFF0, height: 0xFFFF_FFF0), options: options) }
    }
}

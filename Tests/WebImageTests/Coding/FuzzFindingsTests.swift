import Foundation
import Testing
@testable import WebImage

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
        let coders: [any ImageCoder] = [PNGCoder(), JPEGCoder(), WebPCoder(), GIFCoder()]
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

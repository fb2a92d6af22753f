import Foundation
@testable import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageJXL

/// The modern-format corpus (`../shared/testdata/modern`: AVIF, HEIC, JPEG XL, SVG, ICC) and its
/// manifest, and a registry with the three coder plug-ins in front of the built-in coders.
enum ModernCorpus {
    /// The folder: `$WEBIMAGE_TESTDATA/modern`, else `../shared/testdata/modern` from the package root.
    static let directory: URL = Corpus.directory.deletingLastPathComponent().appendingPathComponent("modern")

    /// The built-in coders and the AVIF, HEIF and JPEG XL plug-ins.
    static let coders = ImageCoders([AVIFCoder(), HEIFCoder(), JXLCoder()] + ImageCoders.builtIn)

    /// Every manifest entry.
    static func entries() -> [[String: Any]] { Corpus.manifestEntries(in: directory) }

    /// The entries of the AVIF, HEIC and JPEG XL folders (the plug-ins' files).
    static func plugInEntries() -> [[String: Any]] {
        entries().filter { ["avif", "heic", "jxl"].contains($0["folder"] as? String) }
    }

    /// The bytes of a corpus file (path relative to the corpus folder).
    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(path))
    }
}

/// How far one RGBA8 bitmap is from another of the same size.
struct PixelDistance {
    var meanAbs: Double
    var maxAbs: Int

    init?(_ a: Bitmap, _ b: Bitmap) {
        guard a.width == b.width, a.height == b.height else { return nil }
        var sum = 0, worst = 0
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                for i in 0..<x.count {
                    let d = abs(Int(x[i]) - Int(y[i]))
                    sum += d
                    worst = max(worst, d)
                }
            }
        }
        meanAbs = Double(sum) / Double(max(1, a.byteCount))
        maxAbs = worst
    }
}

import Foundation
@testable import WebImage

/// The shared conformance corpus (`../shared/testdata/corpus` beside the project) and its manifest.
enum Corpus {
    /// The corpus folder: `$WEBIMAGE_TESTDATA/corpus`, else `../shared/testdata/corpus` from the package root.
    static let directory: URL = {
        if let override = ProcessInfo.processInfo.environment["WEBIMAGE_TESTDATA"] {
            return URL(fileURLWithPath: override).appendingPathComponent("corpus")
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.deletingLastPathComponent().appendingPathComponent("shared/testdata/corpus")
    }()

    /// Every manifest entry (parsed on each call: keep the result).
    static func entries() -> [[String: Any]] { manifestEntries(in: directory) }

    /// The `files` of the manifest in `folder` (this corpus's or the modern one's).
    static func manifestEntries(in folder: URL) -> [[String: Any]] {
        let url = folder.appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: url),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let files = object["files"] as? [[String: Any]] else {
            fatalError("cannot read \(url.path): the corpus must be beside the project in ../shared/testdata")
        }
        return files
    }

    /// The bytes of a corpus file (path relative to the corpus folder).
    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(path))
    }

}

extension Bitmap {
    /// Lowercase hex SHA-256 of the RGBA bytes.
    var sha256: String {
        withUnsafeBytes { Digest.sha256($0) }
    }

    /// The largest per-channel difference to `other` (same size required), where colour
    /// channels of pixels transparent in both are not compared.
    func maxDifference(to other: Bitmap) -> Int? {
        guard width == other.width, height == other.height else { return nil }
        return withUnsafeBytes { a in
            other.withUnsafeBytes { b in
                var worst = 0
                var i = 0
                while i < a.count {
                    let alphaDiff = abs(Int(a[i + 3]) - Int(b[i + 3]))
                    worst = max(worst, alphaDiff)
                    if a[i + 3] != 0 || b[i + 3] != 0 {
                        for c in 0..<3 { worst = max(worst, abs(Int(a[i + c]) - Int(b[i + c]))) }
                    }
                    i += 4
                }
                return worst
            }
        }
    }
}

import Foundation

/// A fresh directory under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init(_ label: String = "webimage") {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }

    /// Files in the directory, hidden ones included, but for a disk cache's shared change
    /// counter (`.generation`, made by every cache that writes the folder).
    var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter { $0 != ".generation" }.sorted()
    }
}

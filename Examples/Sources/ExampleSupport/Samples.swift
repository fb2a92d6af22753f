import Foundation

/// The sample images bundled with the `webimage` tool, as `file:` URLs, so that the examples
/// run without a network. Pass an http(s) URL on the command line to load from a server instead.
public enum Samples {
    /// The samples folder of this checkout.
    public static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/webimage/Samples")

    /// Every sample.
    public static var all: [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appendingPathComponent($0) }
    }

    /// The URLs given on the command line, else `fallback`.
    public static func arguments(or fallback: [URL]) -> [URL] {
        let given = CommandLine.arguments.dropFirst().compactMap { URL(string: $0) }
        return given.isEmpty ? fallback : given
    }

    /// The progressive JPEG sample.
    public static var progressiveJPEG: URL { folder.appendingPathComponent("photo-progressive-exif6.jpg") }
    /// The baseline JPEG sample.
    public static var photo: URL { folder.appendingPathComponent("photo-baseline.jpg") }
    /// The animated GIF sample.
    public static var animatedGIF: URL { folder.appendingPathComponent("bouncing-ball.gif") }
}

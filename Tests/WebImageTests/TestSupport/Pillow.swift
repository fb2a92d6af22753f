import Foundation
@testable import WebImage

/// Runs Pillow (Debian's python3-pil, installed by scripts/install-deps.sh) on an image and
/// returns its output: the independent reference for the transformer tests.
enum Pillow {
    static let python = "/usr/bin/python3"

    /// Writes `bitmap` as PNG, runs `statement` with `im` bound to it (RGBA) and returns the
    /// image the statement leaves in `out`, converted to RGBA.
    static func apply(_ statement: String, to bitmap: Bitmap) throws -> Bitmap {
        let dir = TemporaryDirectory("pillow")
        defer { dir.remove() }
        let input = dir.url.appendingPathComponent("in.png"), output = dir.url.appendingPathComponent("out.png")
        try Image(bitmap: bitmap).encoded(as: .png).write(to: input)
        let script = """
        from PIL import Image, ImageFilter
        im = Image.open(\(String(reflecting: input.path))).convert("RGBA")
        \(statement)
        out.convert("RGBA").save(\(String(reflecting: output.path)))
        """
        try run(script)
        return try Image(data: Data(contentsOf: output)).bitmap
    }

    /// Runs a Python `script` (Debian's python3, with Pillow and numpy) with `arguments`.
    /// - Throws: `ImageError.transformFailed` with what it wrote to standard error when it fails.
    static func run(_ script: String, arguments: [String] = []) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script] + arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw ImageError.transformFailed("Python failed: \(text)")
        }
    }
}

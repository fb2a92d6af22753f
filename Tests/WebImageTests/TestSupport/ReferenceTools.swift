import Foundation
@testable import WebImage

/// The reference tools the tests compare decoders with (pdftoppm, avifdec, djxl, heif-convert:
/// installed by scripts/install-deps.sh), run on a file and read back.
enum ReferenceTools {
    /// Writes `input` to a temporary file, runs `tool` with the arguments `arguments(input,
    /// output)` make, and returns the PNG it wrote (at 16 bits a channel when it wrote them).
    /// - Throws: `ImageError.undecodable` when the tool fails.
    static func png(_ tool: String, input: Data, suffix: String, outputName: String = "out.png",
                    _ arguments: (_ input: String, _ output: String) -> [String]) throws -> Bitmap {
        let dir = TemporaryDirectory("reference-tool")
        defer { dir.remove() }
        let source = dir.url.appendingPathComponent("in." + suffix), output = dir.url.appendingPathComponent(outputName)
        try input.write(to: source)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments(source.path, output.path)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ImageError.undecodable(.unknown, reason: "\(tool) failed") }
        return try ImageCoders.shared.decode(try Data(contentsOf: output), options: .sourceDepth).bitmap
    }
}

extension ImageDecodingOptions {
    /// The defaults with `bitDepth = .source`.
    static var sourceDepth: ImageDecodingOptions {
        var options = ImageDecodingOptions()
        options.bitDepth = .source
        return options
    }
}

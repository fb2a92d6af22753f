import ArgumentParser
import Crypto
import Foundation
import WebImage

/// `webimage info`: what a file decodes to, frame by frame.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print format, size, frames, durations, loop count, EXIF orientation and per-frame RGBA SHA-256.",
        discussion: "Without files, describes the sample images bundled with the tool."
    )

    @Argument(help: "Image files. Default: the bundled samples.")
    var files: [String] = []

    @Flag(help: "Print one JSON object per file.")
    var json = false

    @Flag(help: "Keep the pixels as stored instead of applying the EXIF orientation.")
    var rawOrientation = false

    func run() throws {
        let paths = files.isEmpty ? SampleImages.paths() : files
        guard !paths.isEmpty else { throw ValidationError("no files given and no bundled samples found") }
        var failed = false
        for path in paths {
            do {
                let data: Data
                do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                    throw ImageError.unreadableFile(path: path, reason: (error as NSError).localizedDescription)
                }
                let image = try Image(data: data, options: ImageDecodingOptions(appliesOrientation: !rawOrientation))
                let report = try FileReport(image: image)
                let shown = files.isEmpty ? URL(fileURLWithPath: path).lastPathComponent : path
                print(json ? report.json : report.text(path: shown, byteCount: data.count))
            } catch {
                failed = true
                FileHandle.standardError.write(Data("webimage: \(path): \(error)\n".utf8))
            }
        }
        if failed { throw ExitCode(1) }
    }
}

/// The facts `info` prints about one decoded image.
struct FileReport {
    var format: String
    var width: Int
    var height: Int
    var frameCount: Int
    var loopCount: Int?
    var durationsMs: [Double]
    var exifOrientation: Int?
    var frameHashes: [String]

    init(image: Image) throws {
        format = image.format.rawValue
        width = image.width
        height = image.height
        frameCount = image.frameCount
        loopCount = image.loopCount
        durationsMs = image.isAnimated ? image.frameDurations.map { $0 * 1000 } : []
        exifOrientation = image.exifOrientation
        frameHashes = try (0..<image.frameCount).map { index in
            try image.frame(at: index).bitmap.withUnsafeBytes { SHA256.hash(data: $0).map { String(format: "%02x", $0) }.joined() }
        }
    }

    var json: String {
        func number(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : String(value)
        }
        let durations = durationsMs.map(number).joined(separator: ",")
        let frames = frameHashes.map { "{\"rgbaSHA256\":\"\($0)\"}" }.joined(separator: ",")
        return "{\"format\":\"\(format)\",\"width\":\(width),\"height\":\(height),\"frameCount\":\(frameCount),"
            + "\"loopCount\":\(loopCount.map(String.init) ?? "null"),\"durationsMs\":[\(durations)],"
            + "\"exifOrientation\":\(exifOrientation.map(String.init) ?? "null"),\"frames\":[\(frames)]}"
    }

    func text(path: String, byteCount: Int) -> String {
        var lines = ["\(path): \(format) \(width)x\(height), \(byteCount) bytes"]
        if frameCount > 1 {
            let durations = durationsMs.map { String(format: "%g", $0) }.joined(separator: " ")
            lines.append("  frames: \(frameCount), loop count: \(loopCount.map { $0 == 0 ? "forever" : String($0) } ?? "none"), durations (ms): \(durations)")
        }
        if let exifOrientation { lines.append("  EXIF orientation: \(exifOrientation)") }
        for (index, hash) in frameHashes.enumerated().prefix(4) { lines.append("  frame \(index) RGBA SHA-256: \(hash)") }
        if frameHashes.count > 4 { lines.append("  ... \(frameHashes.count - 4) more frames") }
        return lines.joined(separator: "\n")
    }
}

/// The sample images bundled with the tool (the default input of `info`).
enum SampleImages {
    static func paths() -> [String] {
        guard let directory = Bundle.module.url(forResource: "Samples", withExtension: nil),
              let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        return names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted().map { directory.appendingPathComponent($0).path }
    }
}

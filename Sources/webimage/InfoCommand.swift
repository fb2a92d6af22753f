import ArgumentParser
import Foundation
import WebImage

/// `webimage info`: what a file decodes to, frame by frame.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print format, size, frames, durations, loop count, EXIF orientation and per-frame RGBA SHA-256.",
        discussion: "Without files, describes the sample images built into the tool. Exits 1 when any file fails."
    )

    @Argument(help: "Image files; - reads standard input. Default: the samples built into the tool.")
    var files: [String] = []

    @Flag(help: "Print one JSON object per file (with \"path\"; a file that fails gives {\"path\", \"error\"}).")
    var json = false

    @Flag(help: "Keep the pixels as stored instead of applying the EXIF orientation.")
    var rawOrientation = false

    @Option(help: "original (the default) describes the values and the profile as stored; srgb hashes the pixels converted to sRGB.")
    var colorSpace: ImageColorSpace = .original

    func validate() throws {
        if files.filter({ $0 == "-" }).count > 1 { throw ValidationError.sentence("standard input (-) can be read only once") }
    }

    func run() throws {
        let inputs: [(path: String, read: () throws -> Data)] = files.isEmpty
            ? SampleImages.all.map { sample in (sample.name, { sample.data }) }
            : files.map { path in (path, { try InputFile.read(path) }) }
        var failed = false
        for input in inputs {
            do {
                let data = try input.read()
                let image = try Image(data: data, options: ImageDecodingOptions(appliesOrientation: !rawOrientation, colorSpace: colorSpace))
                let report = try FileReport(image: image)
                print(json ? report.json(path: input.path) : report.text(path: input.path, byteCount: data.count))
            } catch {
                failed = true
                let reason = Terminal.describe(error)
                if json { print("{\"path\":\(JSONText.string(input.path)),\"error\":\(JSONText.string(reason + "."))}") }
                Terminal.error("\(input.path): \(reason)")
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
    /// The embedded ICC profile's size and description.
    var colorProfile: (bytes: Int, description: String?)?
    /// The CICP code points the file signals (AVIF, HEIF, JPEG XL).
    var cicp: ImageColorInfo.CICP?

    init(image: Image) throws {
        format = image.format.rawValue
        width = image.width
        height = image.height
        frameCount = image.frameCount
        loopCount = image.declaredLoopCount   // what the file says (null: no loop block, so it plays once)
        durationsMs = image.isAnimated ? image.frameDurations.map { $0 * 1000 } : []
        exifOrientation = image.exifOrientation
        colorProfile = image.colorInfo.iccProfile.map { ($0.count, image.colorInfo.profileDescription) }
        cicp = image.colorInfo.cicp
        frameHashes = try (0..<image.frameCount).map { index in
            try image.frame(at: index).bitmap.withUnsafeBytes { Digest.sha256($0) }
        }
    }

    /// One line of JSON; `path` first.
    func json(path: String) -> String {
        func number(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : String(value)
        }
        let durations = durationsMs.map(number).joined(separator: ",")
        let frames = frameHashes.map { "{\"rgbaSHA256\":\"\($0)\"}" }.joined(separator: ",")
        let profile = colorProfile.map { "{\"bytes\":\($0.bytes),\"description\":\($0.description.map(JSONText.string) ?? "null")}" } ?? "null"
        let code = cicp.map { "{\"colorPrimaries\":\($0.colorPrimaries),\"transferCharacteristics\":\($0.transferCharacteristics),"
            + "\"matrixCoefficients\":\($0.matrixCoefficients),\"fullRange\":\($0.fullRange)}" } ?? "null"
        return "{\"path\":\(JSONText.string(path)),\"format\":\"\(format)\",\"width\":\(width),\"height\":\(height),\"frameCount\":\(frameCount),"
            + "\"loopCount\":\(loopCount.map(String.init) ?? "null"),\"durationsMs\":[\(durations)],"
            + "\"exifOrientation\":\(exifOrientation.map(String.init) ?? "null"),\"colorProfile\":\(profile),\"cicp\":\(code),"
            + "\"frames\":[\(frames)]}"
    }

    func text(path: String, byteCount: Int) -> String {
        var lines = ["\(path): \(format) \(width)x\(height), \(byteCount) bytes"]
        if frameCount > 1 {
            let durations = durationsMs.map { String(format: "%g", $0) }.joined(separator: " ")
            lines.append("  frames: \(frameCount), loop count: \(loopCount.map { $0 == 0 ? "forever" : String($0) } ?? "none declared (plays once)"), durations (ms): \(durations)")
        }
        if let exifOrientation { lines.append("  EXIF orientation: \(exifOrientation)") }
        if let colorProfile { lines.append("  colour profile: \(colorProfile.description ?? "(no description)") (\(colorProfile.bytes) bytes of ICC)") }
        if let cicp {
            lines.append("  CICP: primaries \(cicp.colorPrimaries), transfer \(cicp.transferCharacteristics), matrix \(cicp.matrixCoefficients), "
                         + (cicp.fullRange ? "full range" : "limited range"))
        }
        for (index, hash) in frameHashes.enumerated().prefix(4) { lines.append("  frame \(index) RGBA SHA-256: \(hash)") }
        if frameHashes.count > 4 { lines.append("  ... \(frameHashes.count - 4) more frames") }
        return lines.joined(separator: "\n")
    }
}

/// JSON string literals.
enum JSONText {
    /// `text` as a quoted JSON string (Foundation's JSONSerialization does the escaping).
    static func string(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed, .withoutEscapingSlashes])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}

/// Reading an input file, or standard input for `-`.
enum InputFile {
    /// The bytes of `path` (`-`: all of standard input).
    /// - Throws: `ImageError.unreadableFile` with the system's reason.
    static func read(_ path: String) throws -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        func failure(_ code: Int32) -> ImageError { .unreadableFile(path: path, reason: String(cString: strerror(code))) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(errno) }
        guard (info.st_mode & S_IFMT) != S_IFDIR else { throw failure(EISDIR) }
        // Regular files are read at their size; pipes and devices until their end.
        var data = Data(capacity: max(0, Int(info.st_size)))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let read = chunk.withUnsafeMutableBytes { raw in
                Result { () throws(SystemCallError) in try systemCall("read") { Foundation.read(fd, raw.baseAddress, raw.count) } }
            }
            let count: Int
            switch read {
            case .success(let n): count = n
            case .failure(let error): throw failure(error.code)
            }
            if count == 0 { return data }
            data.append(contentsOf: chunk[0..<count])
        }
    }
}

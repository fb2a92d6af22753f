import ArgumentParser
import Foundation
import WebImage

/// `webimage convert`: decode one file and encode it in another format.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Re-encode an image as PNG, JPEG, WebP or GIF (by --format, else the output's extension).",
        discussion: """
            IN may be - (standard input) and OUT may be - (standard output; needs --format). An \
            animation keeps every frame in GIF, WebP and PNG (APNG); JPEG gets its first frame, \
            and the tool says so. Exits 1 when the input cannot be read or decoded or the output \
            cannot be written.
            """
    )

    @Argument(help: "The input image, or - for standard input.")
    var input: String

    @Argument(help: "The output file (.png, .jpg, .webp or .gif), or - for standard output.")
    var output: String

    @Option(help: "The output format: jpg, jpeg, png, webp or gif (default: from the output's extension).")
    var format: OutputFormat?

    @Option(help: "Quality for JPEG and lossy WebP, 0 to 100.")
    var quality: Int = 90

    @Option(help: "Fit the image in N x N pixels (decode at size).")
    var maxPixelSize: Int?

    @Flag(help: "Lossless WebP.")
    var lossless = false

    @Option(help: "srgb converts an image with another colour profile (Display P3, Adobe RGB, CMYK) to sRGB; original keeps its values and embeds its profile in the output.")
    var colorSpace: ImageColorSpace = .sRGB

    @Option(help: "8 decodes to 8 bits a channel; source (or 16) keeps a source of more than 8 bits at 16, which PNG, TIFF, JPEG XL, AVIF and HEIC (10 or 12 bits) write at depth.")
    var depth: ImageBitDepth = .eight

    @Option(help: "The bits a sample AVIF and HEIC code a 16-bit image in: 10 (the default) or 12.")
    var bitsPerSample: Int?

    @Option(help: "standard tone-maps an HDR (PQ or HLG) image to SDR sRGB; high keeps it HDR at 16 bits with its colour code points, which PNG, AVIF, HEIC and JPEG XL write back.")
    var dynamicRange: ImageDynamicRange = .standard

    func validate() throws {
        guard (0...100).contains(quality) else { throw ValidationError.sentence("--quality must be between 0 and 100, not \(quality)") }
        if let bitsPerSample, ![10, 12].contains(bitsPerSample) {
            throw ValidationError.sentence("--bits-per-sample must be 10 or 12, not \(bitsPerSample)")
        }
        if let maxPixelSize, maxPixelSize < 1 { throw ValidationError.sentence("--max-pixel-size must be at least 1, not \(maxPixelSize)") }
        if output == "-", format == nil { throw ValidationError.sentence("writing to standard output (-) needs --format") }
        if format == nil, ImageFormat(fileExtension: URL(fileURLWithPath: output).pathExtension) == nil {
            throw ValidationError.sentence("cannot tell the format of \(output): end it in .png, .jpg, .jpeg, .webp or .gif, or give --format")
        }
    }

    /// ", 16 bits a channel" (10 or 12 for AVIF and HEIC) when a deep still image is written at depth.
    static func depthNote(_ image: Image, _ format: ImageFormat, bitsPerSample: Int? = nil) -> String {
        guard image.bitmap.pixelFormat == .rgba16, !image.isAnimated else { return "" }
        let coded = ", \(bitsPerSample ?? 10) bits a channel"
        return [ImageFormat.png: ", 16 bits a channel", .jxl: ", 16 bits a channel", .tiff: ", 16 bits a channel",
                .avif: coded, .heic: coded][format] ?? ""
    }

    func run() throws {
        guard let target = format?.imageFormat ?? ImageFormat(fileExtension: URL(fileURLWithPath: output).pathExtension) else {
            throw ValidationError.sentence("cannot tell the output format")
        }
        do {
            let data = try InputFile.read(input)
            var decoding = ImageDecodingOptions(maxPixelSize: maxPixelSize, colorSpace: colorSpace)
            decoding.bitDepth = depth
            decoding.dynamicRange = dynamicRange
            let image = try Image(data: data, options: decoding)
            let encoded = try OutputEncoding.encode(image, as: target,
                                                    options: ImageEncodingOptions(quality: Double(quality) / 100, lossless: lossless,
                                                                                 bitsPerSample: bitsPerSample))
            try OutputFile.write(encoded.data, to: output)
            if let note = encoded.note { Terminal.error("note: \(note)") }
            let summary = "\(output == "-" ? "standard output" : output): \(target) \(image.width)x\(image.height), "
                + "\(image.frameCount) frame(s)\(Self.depthNote(image, target, bitsPerSample: bitsPerSample)), \(encoded.data.count) bytes"
            // With the image on standard output, the summary goes to standard error.
            if output == "-" { FileHandle.standardError.write(Data((summary + "\n").utf8)) } else { print(summary) }
        } catch let error as CLIError {
            Terminal.error(error.description)
            throw ExitCode(1)
        } catch {
            Terminal.error("\(input == "-" ? "standard input" : input): \(Terminal.describe(error))")
            throw ExitCode(1)
        }
    }
}

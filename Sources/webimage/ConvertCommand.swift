import ArgumentParser
import Foundation
import WebImage

/// `webimage convert`: decode one file and encode it in the format of the output's extension.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Re-encode an image as PNG, JPEG, WebP or GIF, chosen by the output file's extension."
    )

    @Argument(help: "The input image.")
    var input: String

    @Argument(help: "The output file (.png, .jpg, .webp or .gif).")
    var output: String

    @Option(help: "Quality for JPEG and lossy WebP, 0 to 100.")
    var quality: Int = 90

    @Option(help: "Fit the image in N x N pixels (decode at size).")
    var maxPixelSize: Int?

    @Flag(help: "Lossless WebP.")
    var lossless = false

    func validate() throws {
        guard (0...100).contains(quality) else { throw ValidationError("--quality must be between 0 and 100") }
        if let maxPixelSize, maxPixelSize < 1 { throw ValidationError("--max-pixel-size must be at least 1") }
        guard ImageFormat(fileExtension: URL(fileURLWithPath: output).pathExtension) != nil else {
            throw ValidationError("the output must end in .png, .jpg, .jpeg, .webp or .gif")
        }
    }

    func run() throws {
        let format = ImageFormat(fileExtension: URL(fileURLWithPath: output).pathExtension)!
        do {
            let image = try Image(contentsOf: URL(fileURLWithPath: input),
                                  options: ImageDecodingOptions(maxPixelSize: maxPixelSize))
            let data = try ImageCoders.shared.encode(image, as: format,
                                                     options: ImageEncodingOptions(quality: Double(quality) / 100, lossless: lossless))
            do { try data.write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
                throw ValidationError("cannot write \(output): \((error as NSError).localizedDescription)")
            }
            print("\(output): \(format) \(image.width)x\(image.height), \(image.frameCount) frame(s), \(data.count) bytes")
        } catch let error as ImageError {
            FileHandle.standardError.write(Data("webimage: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

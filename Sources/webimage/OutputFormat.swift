import ArgumentParser
import Foundation
import WebImage

/// The `--format` values of `get` and `convert`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case jpg, jpeg, png, webp, gif

    /// The library's format.
    var imageFormat: ImageFormat {
        switch self {
        case .jpg, .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .gif: .gif
        }
    }
}

/// Encoding for an output file, saying when the target format cannot hold what the image has.
enum OutputEncoding {
    /// `image` encoded as `format`, and a note when frames were dropped (JPEG holds one frame;
    /// the PNG encoder writes still images).
    static func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions = .init()) throws -> (data: Data, note: String?) {
        let data = try ImageCoders.shared.encode(image, as: format, options: options)
        guard image.isAnimated, format == .jpeg || format == .png else { return (data, nil) }
        let why = format == .jpeg ? "JPEG holds one frame" : "the PNG encoder writes still images (no APNG yet)"
        return (data, "\(why): wrote the first of \(image.frameCount) frames; GIF and WebP keep them all")
    }
}

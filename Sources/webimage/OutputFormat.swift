import ArgumentParser
import Foundation
import WebImage

/// The `--format` values of `get` and `convert`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case jpg, jpeg, png, webp, gif, avif, heic, jxl

    /// The library's format.
    var imageFormat: ImageFormat {
        switch self {
        case .jpg, .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .gif: .gif
        case .avif: .avif
        case .heic: .heic
        case .jxl: .jxl
        }
    }
}

/// Encoding for an output file, saying when the target format cannot hold what the image has.
enum OutputEncoding {
    /// `image` encoded as `format`, and a note when frames were dropped (JPEG and HEIC hold one
    /// frame; GIF, WebP, AVIF, JPEG XL and PNG, as APNG, keep them all).
    static func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions = .init()) throws -> (data: Data, note: String?) {
        let data = try ImageCoders.shared.encode(image, as: format, options: options)
        guard image.isAnimated, [.jpeg, .heic, .heif].contains(format) else { return (data, nil) }
        return (data, "\(format == .jpeg ? "JPEG" : "HEIC") holds one frame: wrote the first of \(image.frameCount) frames; "
                + "GIF, WebP, AVIF, JPEG XL and PNG (APNG) keep them all")
    }
}

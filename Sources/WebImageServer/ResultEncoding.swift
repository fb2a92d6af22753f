import Foundation
import WebImage

/// A result's encoding: the quality the request and the configuration give its format, and,
/// under `mb:`, lower qualities until it fits (imgproxy's `max_bytes`; lossless formats are
/// encoded once).
enum ResultEncoding {
    /// The formats whose size a lower quality makes smaller.
    static let lossy: Set<ImageFormat> = [.jpeg, .webp, .avif, .jxl]

    /// The lowest quality tried under `mb:`.
    static let lowestQuality = 10

    /// `image` encoded as `format` at `quality`; under `maximumBytes` the quality steps down in
    /// proportion to how far over the last try was (at least 5 each time) until it fits or
    /// reaches `lowestQuality`, whose result is then the answer.
    static func encode(_ image: Image, as format: ImageFormat, quality: Int, maximumBytes: Int?) throws -> Data {
        var quality = quality
        while true {
            // AVIF at libavif speed 9 (imgproxy's default): the slower speeds take many times
            // as long a result. PNG without row filters, as libvips-based proxies write it.
            let options = ImageEncodingOptions(quality: Double(quality) / 100, effort: format == .avif || format == .png ? 0.1 : nil)
            let body = try ImageCoders.shared.encode(image, as: format, options: options)
            guard let maximumBytes, body.count > maximumBytes, lossy.contains(format), quality > lowestQuality else { return body }
            try Task.checkCancellation()
            let ratio = Double(maximumBytes) / Double(body.count)
            quality = max(lowestQuality, min(quality - 5, Int((Double(quality) * ratio.squareRoot()).rounded(.down))))
        }
    }
}

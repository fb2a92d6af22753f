import Foundation
import WebImage

/// What the server's configuration says of every result, where a request does not say
/// otherwise: the formats `f:auto` picks from, the colour space, metadata, qualities, the
/// watermark and the fallback image.
struct ResultDefaults: Sendable {
    /// What `f:auto` chooses from, in order.
    var autoFormats: [ImageFormat] = [.avif, .webp]
    /// The colour space of results whose request does not name one.
    var colorSpace: ImageColorSpace = .sRGB
    /// Whether results lose the source's private metadata, and keep its copyright.
    var stripMetadata = true, keepCopyright = true
    /// The quality of each format when a request names none (else 82).
    var quality: [ImageFormat: Int] = [:]
    /// The watermark `wm:` draws.
    var watermark: Bitmap?
    /// The image answered, processed as asked, when a source fails.
    var fallback: Image?
    /// The status of a fallback answer.
    var fallbackStatus = 200
    /// Whether the presets ask for `f:auto` (the response key then holds what `Accept` chose).
    var autoInPresets = ImageProcessor.AutoInPresets.never

    /// The quality a result in `format` is encoded with for `request`, 1 to 100.
    func quality(of request: ProcessingRequest, in format: ImageFormat) -> Int {
        let named = ProcessingRequest.OutputFormat(rawValue: format.rawValue).flatMap { request.formatQuality[$0] }
        return named ?? request.quality ?? quality[format] ?? 82
    }
}

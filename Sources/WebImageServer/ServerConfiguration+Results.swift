import Foundation
import WebImage

extension ServerConfiguration {
    /// The limits a request path is parsed within, with the presets, each checked: it parses
    /// and names no other preset.
    /// - Throws: `ServerConfigurationError` naming a preset that does not parse.
    func processingLimits() throws -> ProcessingLimits {
        var limits = ProcessingLimits()
        limits.maximumDimension = maximumDimension
        limits.presets = presets
        for (name, options) in presets.sorted(by: { $0.key < $1.key }) {
            do {
                var request = ProcessingRequest(source: URL(string: "about:blank")!)
                try request.apply(preset: name, limits: limits, depth: 0)
            } catch {
                throw ServerConfigurationError("the preset \"\(name)\" (\(options)): \(error.reason)")
            }
        }
        return limits
    }

    /// What every result gets where its request does not say: the formats, colour space,
    /// metadata, qualities, and the watermark and fallback images read and decoded now.
    /// - Throws: `ServerConfigurationError` for an unknown format or a quality out of range, or
    ///   a watermark or fallback file that cannot be read or decoded.
    func resultDefaults() throws -> ResultDefaults {
        var defaults = ResultDefaults()
        defaults.autoFormats = autoFormats.compactMap { ImageFormat(fileExtension: $0) }
        defaults.colorSpace = colorSpace
        defaults.stripMetadata = stripMetadata
        defaults.keepCopyright = keepCopyright
        for (name, quality) in formatQuality {
            guard let format = ImageFormat(fileExtension: name) else { throw ServerConfigurationError("formatQuality: unknown format \"\(name)\"") }
            guard (1...100).contains(quality) else { throw ServerConfigurationError("formatQuality: \(name) must be from 1 to 100, not \(quality)") }
            defaults.quality[format] = quality
        }
        defaults.watermark = try watermark.map { try Self.image(at: $0, "watermark").bitmap }
        defaults.fallback = try fallbackImage.map { try Self.image(at: $0, "fallbackImage") }
        guard (200...599).contains(fallbackImageStatus) else { throw ServerConfigurationError("fallbackImageStatus must be an HTTP status") }
        defaults.fallbackStatus = fallbackImageStatus
        defaults.autoInPresets = ImageProcessor.AutoInPresets(presets)
        return defaults
    }

    /// The image of the file at `path`, decoded in sRGB, its first frame at most 4096 pixels a side.
    private static func image(at path: String, _ key: String) throws -> Image {
        guard let data = FileManager.default.contents(atPath: path) else { throw ServerConfigurationError("\(key): \(path) cannot be read") }
        var options = ImageDecodingOptions()
        options.maxPixelSize = 4096
        do { return try ImageCoders.shared.decode(data, options: options) } catch {
            throw ServerConfigurationError("\(key): \(path) is not an image the server decodes (\(error))")
        }
    }
}

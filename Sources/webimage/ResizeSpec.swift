import ArgumentParser
import Foundation
import WebImage

/// `--resize` as ImageMagick and vips take it: `320x240` fits within the box keeping the aspect
/// ratio (320x213 for a 3:2 image, no padding); `320` or `320x` fixes the width, `x240` the
/// height. `--mode` picks another fit by name.
struct ResizeSpec: Sendable, Equatable {
    /// How the image is fitted to the box.
    enum Mode: String, ExpressibleByArgument, CaseIterable, Sendable {
        /// Within the box, aspect ratio kept, no padding (the default, as ImageMagick's `WxH`).
        case fit
        /// Stretched to exactly the box (ImageMagick's `WxH!`).
        case fill
        /// Covers the box and is cropped to it, centred (ImageMagick's `WxH^` plus a crop).
        case fillcrop
        /// Within the box, aspect ratio kept, padded with transparency to exactly the box
        /// (SDWebImage's aspect fit).
        case pad
    }

    /// The largest side `--resize` accepts.
    static let limit = 16384

    let width: Int?
    let height: Int?

    /// Parses `WxH`, `W`, `Wx` or `xH`.
    /// - Throws: `ValidationError` saying what is wrong with it.
    init(parsing text: String) throws {
        let lower = text.lowercased()
        let parts = lower.split(separator: "x", omittingEmptySubsequences: false).map(String.init)
        guard !lower.isEmpty, parts.count <= 2, parts.contains(where: { !$0.isEmpty }) else {
            throw ValidationError.sentence("--resize '\(text)' is not a size: give WxH, W or xH, such as 320x240")
        }
        func side(_ part: String) throws -> Int? {
            if part.isEmpty { return nil }
            guard let value = Int(part) else {
                throw ValidationError.sentence("--resize '\(text)': '\(part)' is not a whole number of pixels")
            }
            guard value >= 1 else { throw ValidationError.sentence("--resize '\(text)': \(value) must be at least 1") }
            guard value <= ResizeSpec.limit else { throw ValidationError.sentence("--resize '\(text)': \(value) is over the \(ResizeSpec.limit) limit") }
            return value
        }
        width = try side(parts[0])
        height = parts.count == 2 ? try side(parts[1]) : nil
    }

    /// The transformer that applies this box with `mode`.
    func transformer(_ mode: Mode) -> BoxResizingTransformer {
        BoxResizingTransformer(width: width, height: height, mode: mode)
    }
}

/// Resizes into a box of which one side may be open, by a `ResizeSpec.Mode`; the size is worked
/// out from each image's own aspect ratio.
struct BoxResizingTransformer: ImageTransformer {
    let width: Int?
    let height: Int?
    let mode: ResizeSpec.Mode

    /// `webimage.resize(WxH,mode)`, with an open side written as empty.
    var key: String { "webimage.resize(\(width.map(String.init) ?? "")x\(height.map(String.init) ?? ""),\(mode.rawValue))" }

    /// The output size for an image of `size`: the box itself for fill, fillcrop and pad with
    /// both sides given, else the image scaled to fit within the box.
    func targetSize(forWidth w: Int, height h: Int) -> (width: Int, height: Int) {
        if let width, let height, mode != .fit { return (width, height) }
        let scaleX = width.map { Double($0) / Double(w) } ?? .infinity
        let scaleY = height.map { Double($0) / Double(h) } ?? .infinity
        let scale = min(scaleX, scaleY)
        let tw = width.map { scaleX == scale ? $0 : nil } ?? nil
        let th = height.map { scaleY == scale ? $0 : nil } ?? nil
        return (tw ?? max(1, Int((Double(w) * scale).rounded())), th ?? max(1, Int((Double(h) * scale).rounded())))
    }

    func transform(_ image: Image) throws -> Image {
        let size = targetSize(forWidth: image.width, height: image.height)
        let scaleMode: ResizingTransformer.ScaleMode = switch mode {
        case .fit, .fill: .fill
        case .fillcrop: width != nil && height != nil ? .aspectFill : .fill
        case .pad: width != nil && height != nil ? .aspectFit : .fill
        }
        return try ResizingTransformer(width: Double(size.width), height: Double(size.height), scaleMode: scaleMode).transform(image)
    }
}

import CWebImageSVG
import Foundation
import WebImage

/// SVG through librsvg (SDWebImageSVGCoder's and coil-svg's counterpart): rasterised at the size
/// a load asks for (`maxPixelSize`: the longer side fills it, enlarging as a vector image may;
/// `fillSize`: the smallest size that covers the box) or else at the document's intrinsic size
/// (its width and height, else its viewBox; 300x150, a browser's default for an image without
/// one, when it has neither), with the pixel limit checked before anything is drawn.
///
/// Safe by default: the document is parsed with no base file, so librsvg follows no external
/// reference (no `http:`, `file:` or relative URL; `data:` URIs only); external, parameter and
/// nested entity declarations are refused before parsing, and libxml2 stops at 256 levels of
/// nesting.
/// Cairo cannot be interrupted, so a rendering has no time limit of its own: a service bounds
/// it with the pixel limit and its processing timeout around the call.
///
/// Register it once: `SVGCoder.register()` (or `ImageCoders.shared.add(SVGCoder())`).
public struct SVGCoder: ImageCoder {
    /// The size given to a document that states none (a browser's default for `<img>`).
    public static let defaultSize = (width: 300, height: 150)

    /// The SVG coder.
    public init() {}

    /// Adds an SVG coder to `coders` (the shared registry by default), tried before the coders
    /// already there.
    public static func register(in coders: ImageCoders = .shared) {
        coders.add(SVGCoder())
    }

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .svg }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        if let reason = SVGCoder.refusedDeclaration(in: data) { throw ImageError.undecodable(.svg, reason: reason) }
        var info = wi_svg_info()
        var status: Int32 = 0
        guard let svg = data.withBytePointer({ wi_svg_open($0, $1, &info, &status) }) else {
            throw CodecBridge.error(status, format: .svg, message: CodecBridge.message(info.message), limit: options.pixelLimit)
        }
        defer { wi_svg_close(svg) }
        let (width, height) = Self.renderSize(intrinsic: (info.width, info.height), options: options)
        guard !options.exceedsPixelLimit(width: width, height: height), width <= 32767, height <= 32767 else {
            throw ImageError.tooLarge(width: width, height: height, limit: options.pixelLimit)
        }
        var out = wi_image()
        let renderStatus = wi_svg_render(svg, UInt32(width), UInt32(height), &out)
        guard renderStatus == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else {
            throw CodecBridge.error(renderStatus, format: .svg, message: CodecBridge.message(out.message), limit: options.pixelLimit)
        }
        let frame = ImageFrame(bitmap: bitmap)
        return Image(firstFrame: frame, frames: .preloaded([frame]), format: .svg, loopCount: nil, scale: options.scale,
                     exifOrientation: nil, orientationApplied: false)
    }

    /// Why the document's prolog is refused, or nil. An entity declared with another entity in
    /// its value (the "billion laughs"), an external or a parameter entity is refused before
    /// libxml2 sees it: libxml2 would refuse it too, but its error path for a nested entity
    /// leaks the declarations (about 1 KB a document in Debian's 2.9.14), which a stranger could
    /// repeat. Plain internal entities (Illustrator's namespace abbreviations) pass.
    static func refusedDeclaration(in data: Data) -> String? {
        let prolog = data.prefix(1 << 20)
        guard let svg = prolog.range(of: Data("<svg".utf8)) else { return nil }
        var rest = prolog[prolog.startIndex..<svg.lowerBound]
        let marker = Data("<!ENTITY".utf8)
        while let found = rest.range(of: marker) {
            let after = rest[found.upperBound...]
            let end = after.firstIndex(of: UInt8(ascii: ">")) ?? after.endIndex
            let declaration = String(decoding: after[after.startIndex..<end], as: UTF8.self)
            let words = declaration.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            if words.first == "%" { return "a parameter entity declaration is refused" }
            if words.contains("SYSTEM") || words.contains("PUBLIC") { return "an external entity declaration is refused" }
            if declaration.contains("&") || declaration.contains("%") { return "an entity declared with other entities in it is refused" }
            rest = after[end...]
        }
        return nil
    }

    /// The pixel size a document of `intrinsic` CSS pixels is drawn at under `options`.
    static func renderSize(intrinsic: (Double, Double), options: ImageDecodingOptions) -> (width: Int, height: Int) {
        var (w, h) = intrinsic
        if !(w > 0 && h > 0 && w.isFinite && h.isFinite) { (w, h) = (Double(defaultSize.width), Double(defaultSize.height)) }
        var factor = 1.0
        if let limit = options.maxPixelSize, limit > 0 { factor = Double(limit) / max(w, h) }
        if let fill = options.fillSize, fill.width > 0 || fill.height > 0 {
            factor = max(fill.width > 0 ? Double(fill.width) / w : 0, fill.height > 0 ? Double(fill.height) / h : 0)
            if let limit = options.maxPixelSize, limit > 0 { factor = min(factor, Double(limit) / max(w, h)) }
        }
        if let count = options.maxPixelCount, count > 0, w * h * factor * factor > Double(count) {
            factor = (Double(count) / (w * h)).squareRoot()
        }
        func side(_ length: Double) -> Int {
            let scaled = length * factor
            guard scaled.isFinite, scaled < Double(Int32.max) else { return Int(Int32.max) }
            return max(1, Int((scaled - 1e-9).rounded(.up)))
        }
        return (side(w), side(h))
    }

    public func canEncode(_ format: ImageFormat) -> Bool { false }

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        throw ImageError.encodingFailed(format, reason: "the SVG coder does not write SVG")
    }
}

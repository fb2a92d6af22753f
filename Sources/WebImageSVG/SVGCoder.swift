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
/// reference (no `http:`, `file:` or relative URL; `data:` URIs only); plain internal entities
/// are expanded before parsing and external, parameter and nested ones refused (libxml2 sees
/// no entity declaration), and libxml2 stops at 256 levels of nesting.
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

    /// With an SVG hint, any XML text: a document whose `<svg` comes after a long prolog or
    /// comment, past what sniffing reads. Its first character after a byte-order mark and white
    /// space must be `<`; librsvg judges the rest.
    public func canDecode(_ data: Data, hint: ImageFormat) -> Bool {
        guard hint == .svg else { return false }
        var bytes = data.prefix(64)[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "<")
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        let document = try SVGCoder.expandingEntities(in: data)
        var info = wi_svg_info()
        var status: Int32 = 0
        guard let svg = document.withBytePointer({ wi_svg_open($0, $1, &info, &status) }) else {
            throw CodecBridge.error(status, format: .svg, message: CodecBridge.message(info.message), limit: options.pixelLimit)
        }
        defer { wi_svg_close(svg) }
        let (width, height) = options.drawingSize(intrinsic: (info.width, info.height), fallback: Self.defaultSize)
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

    /// The document with its internal entity declarations expanded here, and its DOCTYPE's
    /// internal subset removed, so that libxml2 never sees an entity declaration: Debian's
    /// libxml2 2.9.14 under librsvg leaks each declared value (100 bytes and more a declaration,
    /// found by LeakSanitizer), which a stranger could repeat. Plain internal entities
    /// (Illustrator's namespace abbreviations) are expanded as libxml2 would; an external, a
    /// parameter or a nested entity (the "billion laughs") is refused, and so is an expansion
    /// that would grow the document past four times its size.
    /// - Throws: `ImageError.undecodable` naming the refused declaration.
    static func expandingEntities(in data: Data) throws -> Data {
        func refuse(_ reason: String) -> ImageError { .undecodable(.svg, reason: reason) }
        guard let doctype = data.range(of: Data("<!DOCTYPE".utf8)),
              let svg = data.range(of: Data("<svg".utf8)), doctype.lowerBound < svg.lowerBound,
              let open = data[doctype.upperBound..<svg.lowerBound].firstIndex(of: UInt8(ascii: "[")),
              let close = data[open..<svg.lowerBound].range(of: Data("]".utf8), options: .backwards) else { return data }
        var subset = String(decoding: data[(open + 1)..<close.lowerBound], as: UTF8.self)[...]
        var entities: [(name: String, value: String)] = []
        while let found = subset.range(of: "<!ENTITY") {
            let after = subset[found.upperBound...]
            guard let end = after.firstIndex(of: ">") else { throw refuse("an unterminated entity declaration") }
            let declaration = after[after.startIndex..<end].trimmingCharacters(in: .whitespacesAndNewlines)
            let parts = declaration.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            guard parts.count == 2 else { throw refuse("a malformed entity declaration") }
            let name = String(parts[0]), rest = parts[1].trimmingCharacters(in: .whitespacesAndNewlines)
            if name == "%" { throw refuse("a parameter entity declaration is refused") }
            guard let quote = rest.first, quote == "\"" || quote == "'", rest.count >= 2, rest.last == quote else {
                throw refuse("an external entity declaration is refused")
            }
            let value = String(rest.dropFirst().dropLast())
            if value.contains("&") || value.contains("%") || value.contains("<") {
                throw refuse("an entity declared with markup or other entities in it is refused")
            }
            entities.append((name, value))
            subset = after[after.index(after: end)...]
        }
        guard !entities.isEmpty else { return data }
        // The first declaration of a name wins, as in XML.
        var values: [ArraySlice<UInt8>: [UInt8]] = [:]
        var longestName = 0
        for (name, value) in entities where values[ArraySlice(name.utf8)] == nil {
            values[ArraySlice(name.utf8)] = Array(value.utf8)
            longestName = max(longestName, name.utf8.count)
        }
        var body = Array(data[close.upperBound...])
        // The rest of the DOCTYPE (after its internal subset) up to its closing ">".
        if let end = body.firstIndex(of: UInt8(ascii: ">")) { body.removeSubrange(...end) }
        // One pass over the body: each `&name;` of a declared name is replaced by its value
        // (which holds no `&`, so nothing is expanded twice), everything else is copied.
        let limit = 4 * data.count + 4096
        var output = Array(data[data.startIndex..<doctype.lowerBound])
        output.reserveCapacity(body.count + output.count)
        var index = 0
        while index < body.count {
            guard body[index] == UInt8(ascii: "&") else {
                output.append(body[index])
                index += 1
                continue
            }
            let nameStart = index + 1
            let searchEnd = min(body.count, nameStart + longestName + 1)
            if let semicolon = body[nameStart..<searchEnd].firstIndex(of: UInt8(ascii: ";")), let value = values[body[nameStart..<semicolon]] {
                output.append(contentsOf: value)
                index = semicolon + 1
                if output.count > limit { throw refuse("the entities expand the document past four times its size") }
            } else {
                output.append(body[index])
                index += 1
            }
        }
        return Data(output)
    }

    public func canEncode(_ format: ImageFormat) -> Bool { false }

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        throw ImageError.encodingFailed(format, reason: "the SVG coder does not write SVG")
    }
}

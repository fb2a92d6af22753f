import Foundation

/// SDWebImage's cache-key rules for transformed and thumbnail images, so that keys written by
/// one agree with the other: `image.png` with transformer key `T` becomes `image-T.png`; for a
/// URL only the path changes and the query and fragment are kept.
public enum CacheKeys {
    /// Joins a key and a transformer key, and the keys of a pipeline's transformers.
    public static let separator = "-"

    /// The key of `key` transformed by a transformer whose key is `transformerKey`.
    public static func transformedKey(for key: String, transformerKey: String) -> String {
        if let components = URLComponents(string: key), components.scheme?.lowercased() != "file" {
            let ext = PathExtension.of(components.path)
            guard !ext.isEmpty else { return key + separator + transformerKey }
            var changed = components
            let base = String(components.path.dropLast(ext.count + 1))
            changed.path = base + separator + transformerKey + "." + ext
            if let string = changed.string { return string }
        }
        let ext = PathExtension.of(key)
        guard !ext.isEmpty else { return key + separator + transformerKey }
        return String(key.dropLast(ext.count + 1)) + separator + transformerKey + "." + ext
    }

    /// The key a progressive preview of the image under `key` is kept under in memory
    /// (`ImageContext.storesPreviewsInMemory`): never the final image's own.
    public static func previewKey(for key: String) -> String {
        transformedKey(for: key, transformerKey: "ProgressivePreview")
    }

    /// The key of `key` decoded as a thumbnail of `width` x `height` pixels.
    public static func thumbnailedKey(for key: String, width: Double, height: Double, preserveAspectRatio: Bool) -> String {
        let thumbnailKey = String(format: "Thumbnail({%f,%f},%d)", width, height, preserveAspectRatio ? 1 : 0)
        return transformedKey(for: key, transformerKey: thumbnailKey)
    }

    /// The key of `key` decoded at the smallest size that fills `width` x `height` pixels
    /// (`ImageContext.fillPixelSize`).
    public static func filledKey(for key: String, width: Int, height: Int) -> String {
        transformedKey(for: key, transformerKey: "Fill({\(width),\(height)})")
    }

    /// The key of the fill box cut out at `anchor` (`ImageContext.fillAnchor`) from the image
    /// under `key`, which fills a `width` x `height` box.
    public static func filledKey(for key: String, width: Int, height: Int, anchor: FillAnchor) -> String {
        transformedKey(for: key, transformerKey: "Fill({\(width),\(height)},{\(KeyFormat.number(anchor.x)),\(KeyFormat.number(anchor.y))})")
    }
}

/// The extension of the last path component, as `NSString.pathExtension` reads it: the text
/// after the last dot, empty when there is none or the dot starts or ends the component.
enum PathExtension {
    static func of(_ path: String) -> String {
        let component = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? ""
        guard let dot = component.lastIndex(of: "."), dot != component.startIndex else { return "" }
        return String(component[component.index(after: dot)...])
    }

    /// `of(_:)` for a path of ASCII characters, read from its bytes with `range(in:path:)` (the
    /// reading cache file names use; for tests, which compare it with `of(_:)`).
    static func ofASCII(_ path: String) -> String {
        var path = path
        return path.withUTF8 { bytes in
            String(decoding: UnsafeBufferPointer(rebasing: bytes[range(in: bytes, path: 0..<bytes.count)]), as: UTF8.self)
        }
    }

    /// `of(_:)` over the UTF-8 bytes of an ASCII path at `path` in `bytes`: the range after the
    /// last `.` of the last component, trailing slashes aside; empty when there is none (no
    /// array of components, no string).
    static func range(in bytes: UnsafeBufferPointer<UInt8>, path: Range<Int>) -> Range<Int> {
        var end = path.upperBound
        while end > path.lowerBound, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        let component = (bytes[path.lowerBound..<end].lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 }) ?? path.lowerBound
        guard let dot = bytes[component..<end].lastIndex(of: UInt8(ascii: ".")), dot != component else { return end..<end }
        return (dot + 1)..<end
    }

    /// The last path component without its extension (and without a query or fragment).
    static func stem(of key: String) -> String {
        let path = key.split(whereSeparator: { $0 == "?" || $0 == "#" }).first.map(String.init) ?? key
        let component = path.split(separator: "/").last.map(String.init) ?? ""
        let ext = of(component)
        return ext.isEmpty ? component : String(component.dropLast(ext.count + 1))
    }
}

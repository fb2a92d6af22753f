import Foundation

/// An image container format, recognised from the first bytes of the data.
///
/// PNG (including APNG), JPEG, GIF and WebP are decoded and encoded by the built-in coders.
/// HEIC, HEIF, AVIF, TIFF, BMP, SVG, PDF and ICO are recognised so that callers can report
/// what they received, but no built-in coder decodes them.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case png, jpeg, gif, webp
    case heic, heif, avif, tiff, bmp, svg, pdf, ico
    case unknown

    /// Identifies the format of `data` from its magic bytes (never from a file name).
    public init(sniffing data: Data) {
        self = data.withUnsafeBytes { ImageFormat.sniff(Array($0.prefix(64))) }
    }

    /// Identifies the format of the first bytes of an image.
    public init(sniffing bytes: [UInt8]) {
        self = ImageFormat.sniff(Array(bytes.prefix(64)))
    }

    private static func sniff(_ b: [UInt8]) -> ImageFormat {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + prefix.count && Array(b[offset..<offset + prefix.count]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("ftyp".utf8), at: 4), b.count >= 12 {
            let brand = String(decoding: b[8..<12], as: UTF8.self)
            switch brand {
            case "avif", "avis": return .avif
            case "heic", "heix", "hevc", "hevx", "heim", "heis": return .heic
            case "mif1", "msf1": return .heif
            default: break
            }
        }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(Array("BM".utf8)), b.count >= 14 { return .bmp }
        if starts(Array("%PDF".utf8)) { return .pdf }
        if starts([0x00, 0x00, 0x01, 0x00]) { return .ico }
        let text = String(decoding: b, as: UTF8.self).lowercased()
        if text.contains("<svg") || (text.hasPrefix("<?xml") && text.contains("svg")) { return .svg }
        return .unknown
    }

    /// Whether the built-in coders can decode this format.
    public var isDecodable: Bool { [.png, .jpeg, .gif, .webp].contains(self) }

    /// The usual file extension, without the dot.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .unknown: "bin"
        default: rawValue
        }
    }

    /// The format for a file extension (`"jpg"`, `"JPEG"`, `"png"`, ...), or `nil`.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg", "jpe": self = .jpeg
        case "png", "apng": self = .png
        case "gif": self = .gif
        case "webp": self = .webp
        default: return nil
        }
    }

    /// The MIME type, e.g. `image/png`.
    public var mimeType: String {
        switch self {
        case .svg: "image/svg+xml"
        case .pdf: "application/pdf"
        case .ico: "image/x-icon"
        case .unknown: "application/octet-stream"
        default: "image/\(rawValue)"
        }
    }

    public var description: String { rawValue }
}

import Foundation

/// An image container format, recognised from the first bytes of the data.
///
/// PNG (including APNG), JPEG, GIF and WebP are decoded and encoded by the built-in coders;
/// AVIF, HEIC/HEIF and JPEG XL by the coder plug-ins `WebImageAVIF`, `WebImageHEIF` and
/// `WebImageJXL` once registered. TIFF, BMP, SVG, PDF and ICO are recognised so that callers
/// can report what they received, but no coder of this package decodes them yet.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case png, jpeg, gif, webp
    case heic, heif, avif, jxl, tiff, bmp, svg, pdf, ico
    case unknown

    /// Identifies the format of `data` from its magic bytes (never from a file name).
    public init(sniffing data: Data) {
        self = data.withUnsafeBytes { ImageFormat.sniff(Array($0.prefix(ImageFormat.sniffedByteCount))) }
    }

    /// Identifies the format of the first bytes of an image.
    public init(sniffing bytes: [UInt8]) {
        self = ImageFormat.sniff(Array(bytes.prefix(ImageFormat.sniffedByteCount)))
    }

    /// How many leading bytes sniffing reads: enough for an ISO-BMFF `ftyp` box with a long list
    /// of compatible brands.
    static let sniffedByteCount = 256

    /// The image format an ISO-BMFF file (HEIF's container) declares in its `ftyp` box, decided
    /// by the major brand and then the compatible brands (a file whose major brand is the
    /// generic `mif1` can still be AVIF), or nil when no brand names an image format.
    private static func isoBrandFormat(_ b: [UInt8]) -> ImageFormat? {
        let size = b.count >= 4 ? Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3]) : 0
        guard size >= 16, b.count >= 12 else { return nil }
        func brand(_ offset: Int) -> String { String(decoding: b[offset..<offset + 4], as: UTF8.self) }
        var brands = [brand(8)]
        var offset = 16
        while offset + 4 <= min(size, b.count) { brands.append(brand(offset)); offset += 4 }
        func format(of brand: String) -> ImageFormat? {
            switch brand {
            case "avif", "avis": .avif
            case "heic", "heix", "hevc", "hevx", "heim", "heis": .heic
            default: nil
            }
        }
        if let major = format(of: brands[0]) { return major }
        if let compatible = brands.dropFirst().lazy.compactMap(format(of:)).first { return compatible }
        return brands.contains(where: { $0 == "mif1" || $0 == "msf1" }) ? .heif : nil
    }

    private static func sniff(_ b: [UInt8]) -> ImageFormat {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + prefix.count && Array(b[offset..<offset + prefix.count]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("ftyp".utf8), at: 4), let format = isoBrandFormat(b) { return format }
        // JPEG XL: a bare codestream, or the ISO-BMFF container's signature box.
        if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) || starts([0x49, 0x49, 0x2B, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2B]) {
            return .tiff   // classic and BigTIFF
        }
        if starts(Array("BM".utf8)), b.count >= 14 { return .bmp }
        if starts(Array("%PDF".utf8)) { return .pdf }
        if starts([0x00, 0x00, 0x01, 0x00]) || starts([0x00, 0x00, 0x02, 0x00]) { return .ico }   // icon, cursor
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
        case "avif": self = .avif
        case "heic": self = .heic
        case "heif", "hif": self = .heif
        case "jxl": self = .jxl
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

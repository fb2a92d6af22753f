import Foundation
import WebImage

/// What one request asks the image server for: the processing options, then the source.
///
/// The path: `/SIGNATURE/OPTION/OPTION/.../SOURCE`, imgproxy's shape. Each option is
/// `name:argument:argument`; the source is `plain/` and the percent-encoded URL (an `@png`
/// suffix names the output format), or the URL in base64url (a `.png` suffix names the format).
/// See the DocC article "Serving images" for the grammar against imgproxy's and thumbor's.
public struct ProcessingRequest: Sendable, Equatable {
    /// How the image fits the asked box (imgproxy's resizing types).
    public enum ResizeMode: String, Sendable, CaseIterable {
        /// Within the box, aspect ratio kept.
        case fit
        /// Covering the box, then cropped to it around the gravity (imgproxy's `fill`, thumbor's
        /// default; `fill-crop` is the same).
        case fill
        /// As `fill`, but a source smaller than the box is not enlarged: it is cropped to the
        /// box's aspect ratio instead (imgproxy's `fill-down`).
        case fillDown = "fill-down"
        /// Exactly the box, stretched (imgproxy's `force`; `exact` is the same).
        case force
        /// `fill` when the source and the box are both landscape or both portrait, else `fit`.
        case auto
        /// Covering the box, aspect ratio kept, not cropped (one side may be larger than the box).
        case cover
    }

    /// Where a crop keeps the image, or where an extended image sits on its canvas.
    public enum Gravity: Sendable, Equatable {
        /// One of the nine anchors: x and y from 0 (left, top) to 1 (right, bottom).
        case anchor(x: Double, y: Double)
        /// A focal point: x and y from 0 to 1 of the source.
        case focalPoint(x: Double, y: Double)
        /// The most salient part: edges, saturated colours and skin tones (libvips's
        /// `attention` strategy); the centre for an extension.
        case smart
    }

    /// The output format asked for.
    public enum OutputFormat: String, Sendable, CaseIterable {
        case png, jpeg, webp, gif, avif, jxl, heic
        /// The first of the configured `autoFormats` (AVIF, then WebP by default) that the
        /// request's `Accept` allows, else the source's format.
        case auto
    }

    /// Borders removed before anything else (imgproxy's `trim`).
    public struct Trim: Sendable, Equatable {
        /// How far (0 to 255, per channel) a pixel may be from the colour and still be border.
        public var threshold: Double
        /// The border's colour (nil: the top-left pixel's).
        public var color: Color?
        /// Whether the left and right borders are cut equally (the smaller of the two).
        public var equalHorizontal = false
        /// Whether the top and bottom borders are cut equally.
        public var equalVertical = false
    }

    /// A crop of the source before the resize (imgproxy's `crop`).
    public struct Crop: Sendable, Equatable {
        /// The size kept: pixels, or a fraction of the source below 1 (0: the whole side).
        public var width: Double
        /// The height kept, as `width`.
        public var height: Double
        /// Where it is taken (nil: the request's gravity).
        public var gravity: Gravity?
    }

    /// Space added around the result, in the background colour (CSS order).
    public struct Padding: Sendable, Equatable {
        /// The pixels added on each side, before the device pixel ratio.
        public var top = 0, right = 0, bottom = 0, left = 0
    }

    /// The configured watermark placed on the result (imgproxy's `watermark`).
    public struct Watermark: Sendable, Equatable {
        /// 0 to 1.
        public var opacity: Double
        /// Where it goes (nil: repeated over the whole image, imgproxy's `re`).
        public var position: Gravity?
        /// Pixels from the edge the gravity names, across.
        public var offsetX = 0.0
        /// Pixels from the edge the gravity names, down.
        public var offsetY = 0.0
        /// The watermark's width as a fraction of the result's (0: its own size).
        public var scale = 0.0
    }

    /// Resize mode and box (0: that side is free).
    public var mode: ResizeMode = .fit
    public var width = 0
    public var height = 0
    public var gravity: Gravity = .anchor(x: 0.5, y: 0.5)
    /// Pixels the gravity's point moves by, away from the edge it names (imgproxy's gravity offsets), across.
    public var gravityOffsetX = 0.0
    /// The same, down.
    public var gravityOffsetY = 0.0
    /// Whether a source smaller than the box may be enlarged (`el:1`).
    public var enlarge = false
    /// The canvas grows to the box when the result is smaller (`ex:1:GRAVITY`), placed by this gravity.
    public var extend: Gravity?
    /// The least width of the result (`mw:`), enlarging if need be.
    public var minWidth = 0
    /// The least height of the result (`mh:`), enlarging if need be.
    public var minHeight = 0
    /// Multiplies the resize across (`z:X:Y`).
    public var zoomX = 1.0
    /// Multiplies the resize down.
    public var zoomY = 1.0
    public var crop: Crop?
    public var trim: Trim?
    public var padding: Padding?
    /// The colour of extensions, padding and of transparency in formats without alpha (`bg:`).
    public var background: Color?
    /// Device pixel ratio: the box, minimum sizes and padding are multiplied by it.
    public var devicePixelRatio = 1.0
    /// Encoding quality, 1 to 100 (nil: the format's configured default, else the encoder's).
    public var quality: Int?
    /// Per-format qualities (`fq:jpeg:80:webp:70`), over `quality` for those formats.
    public var formatQuality: [OutputFormat: Int] = [:]
    /// The most bytes the result may have (`mb:`): the quality is stepped down until it fits.
    public var maximumBytes: Int?
    public var format: OutputFormat?
    /// `sm:BOOL` (`strip_metadata`, or the flag `strip`): whether EXIF, XMP, IPTC and comments
    /// are removed (nil: the server's `stripMetadata`, true by default).
    public var stripMetadata: Bool?
    /// `kcr:BOOL` (`keep_copyright`): whether EXIF's Copyright and Artist stay when metadata is
    /// removed (nil: the server's `keepCopyright`, true by default).
    public var keepCopyright: Bool?
    public var blurRadius: Double?
    /// Unsharp mask after the resize, its Gaussian's sigma (`sh:`).
    public var sharpen: Double?
    /// Pixel blocks of this size (`pix:`).
    public var pixelate: Int?
    /// Added to each channel, -255 to 255 (`br:`).
    public var brightness: Int?
    /// Contrast factor around mid-grey, 1 unchanged (`co:`).
    public var contrast: Double?
    /// Saturation factor, 1 unchanged, 0 grey (`sa:`).
    public var saturation: Double?
    /// Clockwise, in degrees.
    public var rotation: Double?
    public var flipHorizontal = false
    public var flipVertical = false
    public var grayscale = false
    public var tint: Color?
    public var cornerRadius: Double?
    public var watermark: Watermark?
    public var firstFrameOnly = false
    /// `pg:N` (imgproxy's `page`): the page of a PDF source to draw, from 0 (nil: the first).
    public var page: Int?
    /// `depth:source`: a source of more than 8 bits (a 16-bit PNG, a 10-bit AVIF) keeps its
    /// depth in a result that changes only its format, written at depth by PNG (16 bits), AVIF
    /// (10) and JPEG XL (16); nil or `depth:8` gives 8 bits.
    public var bitDepth: ImageBitDepth?
    /// `cs:srgb` or `cs:original`: the colour space of the result (nil: the server's
    /// `colorSpace`, sRGB by default). `original` keeps the source's values and embeds its
    /// profile in the result.
    public var colorSpace: ImageColorSpace?
    /// Answer with the image's description (JSON), not the image.
    public var info = false
    /// The source's bytes as they came, unprocessed (`raw`), within the source limits.
    public var raw = false
    /// When the URL stops being served, seconds since 1970 (`exp:`): then a 404.
    public var expires: Int?
    /// The file name the response suggests (`fn:`), without extension.
    public var filename: String?
    /// `Content-Disposition: attachment` rather than inline (`att:1`).
    public var attachment = false
    /// The source URL.
    public var source: URL

    /// The part of the path that is signed: everything after the signature, from its slash.
    public var signedPath = ""
}

/// Why a request was refused (every one a 4xx with a one-line reason, and never an origin request).
public struct ProcessingRequestError: Error, Equatable, CustomStringConvertible {
    /// The HTTP status: 400 for a malformed request, 403 for a signature or a source refused.
    public let status: Int
    /// One line.
    public let reason: String

    /// A refusal with `status` and `reason`.
    public init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    /// `status reason`.
    public var description: String { "\(status) \(reason)" }
}

/// Limits on what a request may ask for.
public struct ProcessingLimits: Sendable {
    /// The largest width or height of a result, after the device pixel ratio (default 4096).
    public var maximumDimension = 4096
    /// The largest blur radius (default 100).
    public var maximumBlurRadius = 100.0
    /// The largest device pixel ratio (default 4).
    public var maximumDevicePixelRatio = 4.0
    /// Named option sets (`pr:NAME`), each a path of options (`rs:fit:300:300/q:80`); the one
    /// named `default` applies to every request first.
    public var presets: [String: String] = [:]

    /// The defaults.
    public init() {}
}

extension ProcessingRequest {
    /// Parses a request path (without its query). The signature is the first segment; it is
    /// checked by `URLSigner`, not here.
    /// - Throws: `ProcessingRequestError` (400) saying what is malformed or out of range.
    public static func parse(path: String, limits: ProcessingLimits = .init()) throws(ProcessingRequestError) -> (signature: String, request: ProcessingRequest) {
        func bad(_ reason: String) -> ProcessingRequestError { ProcessingRequestError(400, reason) }
        guard let (signature, signedPath) = signature(of: path) else { throw bad("the path must start with /SIGNATURE/") }
        var segments = signedPath.split(separator: "/", omittingEmptySubsequences: false).dropFirst()   // the slash after the signature
        var request = ProcessingRequest(source: URL(string: "about:blank")!)
        request.signedPath = signedPath
        if limits.presets["default"] != nil { try request.apply(preset: "default", limits: limits, depth: 0) }
        var source: URL?
        while let segment = segments.popFirst() {
            if segment == "plain" {
                var rest = segments.joined(separator: "/")
                segments = []
                if let at = rest.lastIndex(of: "@"), !rest[rest.index(after: at)...].contains("/") {
                    try request.setFormat(String(rest[rest.index(after: at)...]))
                    rest = String(rest[..<at])
                }
                guard let decoded = rest.removingPercentEncoding else { throw bad("the plain source is not valid percent-encoding") }
                source = URL(string: decoded)
                guard source != nil, !decoded.isEmpty else { throw bad("the plain source is not a URL") }
            } else if !segment.contains(":"), !ProcessingOptions.flags.contains(String(segment)), !segments.contains("plain") {
                // The last segments: the source in base64url, maybe split by slashes, maybe with .ext.
                var encoded = ([segment] + segments).joined()
                segments = []
                if let dot = encoded.lastIndex(of: ".") {
                    try request.setFormat(String(encoded[encoded.index(after: dot)...]))
                    encoded = String(encoded[..<dot])
                }
                guard let data = Base64URL.decode(encoded), let text = String(data: data, encoding: .utf8), let url = URL(string: text) else {
                    throw bad("the source is not valid base64url of a URL")
                }
                source = url
            } else {
                try request.apply(option: String(segment), limits: limits, depth: 0)
            }
        }
        guard let source else { throw bad("the path has no source (plain/URL or a base64url URL)") }
        request.source = source
        try request.checkGeometry(limits: limits)
        return (String(signature), request)
    }

    /// The signature (the first segment) and the path it signs (the rest, from its slash), read
    /// before anything else of the path: a request whose signature fails is refused without
    /// being parsed. Nil when the path does not start with `/SIGNATURE/`.
    static func signature(of path: String) -> (signature: String, signedPath: String)? {
        guard path.hasPrefix("/") else { return nil }
        let rest = path.dropFirst()
        guard let slash = rest.firstIndex(of: "/"), slash > rest.startIndex else { return nil }
        return (String(rest[..<slash]), String(rest[slash...]))
    }

}

extension ProcessingRequest {
    /// A boolean argument as imgproxy spells them: 1, t, true or 0, f, false (any case).
    static func bool(_ text: String, _ option: String) throws(ProcessingRequestError) -> Bool {
        switch text.lowercased() {
        case "1", "t", "true": return true
        case "0", "f", "false": return false
        default: throw ProcessingRequestError(400, "\(option) takes 1 or 0 (t, true, f, false), not \"\(text)\"")
        }
    }

    /// `RRGGBB` or `RRGGBBAA` (a leading # allowed) as a color.
    static func color(hex text: String) -> Color? {
        let digits = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard digits.count == 6 || digits.count == 8, let value = UInt32(digits, radix: 16) else { return nil }
        let rgba = digits.count == 6 ? value << 8 | 0xFF : value
        func channel(_ shift: UInt32) -> Double { Double((rgba >> shift) & 0xFF) / 255 }
        return Color(red: channel(24), green: channel(16), blue: channel(8), alpha: channel(0))
    }
}

/// base64url (RFC 4648 §5), padding optional.
enum Base64URL {
    static func decode(_ text: String) -> Data? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 = base64.trimmingCharacters(in: CharacterSet(charactersIn: "="))
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    static func encode(_ data: some Sequence<UInt8>) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .trimmingCharacters(in: CharacterSet(charactersIn: "="))
    }
}

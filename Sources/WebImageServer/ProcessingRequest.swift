import Foundation
import WebImage

/// What one request asks the image server for: the processing options, then the source.
///
/// The path: `/SIGNATURE/OPTION/OPTION/.../SOURCE`, imgproxy's shape. Each option is
/// `name:argument:argument`; the source is `plain/` and the percent-encoded URL (an `@png`
/// suffix names the output format), or the URL in base64url (a `.png` suffix names the format).
/// See the DocC article "Serving images" for the grammar against imgproxy's and thumbor's.
public struct ProcessingRequest: Sendable, Equatable {
    /// How the image fits the asked box.
    public enum ResizeMode: String, Sendable, CaseIterable {
        /// Within the box, aspect ratio kept.
        case fit
        /// Covering the box, aspect ratio kept (one side may be larger than the box).
        case fill
        /// Covering the box, then cropped to it around the gravity (imgproxy's `fill`, thumbor's default).
        case fillCrop = "fill-crop"
        /// Exactly the box, stretched.
        case exact
    }

    /// Where a crop keeps the image.
    public enum Gravity: Sendable, Equatable {
        /// One of the nine anchors: x and y from 0 (left, top) to 1 (right, bottom).
        case anchor(x: Double, y: Double)
        /// A focal point: x and y from 0 to 1 of the source.
        case focalPoint(x: Double, y: Double)
    }

    /// The output format asked for.
    public enum OutputFormat: String, Sendable {
        case png, jpeg, webp, gif, avif, jxl, heic
        /// The first of the configured `autoFormats` (AVIF, then WebP by default) that the
        /// request's `Accept` allows, else the source's format.
        case auto
    }

    /// Resize mode and box (0: that side is free).
    public var mode: ResizeMode = .fit
    public var width = 0
    public var height = 0
    public var gravity: Gravity = .anchor(x: 0.5, y: 0.5)
    /// Device pixel ratio: the box is multiplied by it.
    public var devicePixelRatio = 1.0
    /// Encoding quality, 1 to 100 (nil: the encoder's default).
    public var quality: Int?
    public var format: OutputFormat?
    /// `sm:BOOL` (`strip_metadata`, or the flag `strip`): whether EXIF, XMP, IPTC and comments
    /// are removed (nil: the server's `stripMetadata`, true by default).
    public var stripMetadata: Bool?
    /// `kcr:BOOL` (`keep_copyright`): whether EXIF's Copyright and Artist stay when metadata is
    /// removed (nil: the server's `keepCopyright`, true by default).
    public var keepCopyright: Bool?
    public var blurRadius: Double?
    /// Clockwise, in degrees.
    public var rotation: Double?
    public var flipHorizontal = false
    public var flipVertical = false
    public var grayscale = false
    public var tint: Color?
    public var cornerRadius: Double?
    public var firstFrameOnly = false
    /// `cs:srgb` or `cs:original`: the colour space of the result (nil: the server's
    /// `colorSpace`, sRGB by default). `original` keeps the source's values and embeds its
    /// profile in the result.
    public var colorSpace: ImageColorSpace?
    /// Answer with the image's description (JSON), not the image.
    public var info = false
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
            } else if !segment.contains(":"), !Self.flags.contains(String(segment)), !segments.contains("plain") {
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
                try request.apply(option: String(segment), limits: limits)
            }
        }
        guard let source else { throw bad("the path has no source (plain/URL or a base64url URL)") }
        request.source = source
        let box = [request.width, request.height].map { Double($0) * request.devicePixelRatio }
        guard box.allSatisfy({ $0 <= Double(limits.maximumDimension) }) else {
            throw bad("the result would be larger than \(limits.maximumDimension) pixels on a side")
        }
        if request.mode == .exact, request.width == 0 || request.height == 0, request.width != request.height {
            throw bad("rs:\(request.mode.rawValue) needs both a width and a height")
        }
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

    /// Options without arguments.
    static let flags: Set<String> = ["strip", "gs", "ff", "info"]

    private mutating func setFormat(_ text: String) throws(ProcessingRequestError) {
        let name = text.lowercased() == "jpg" ? "jpeg" : text.lowercased()
        guard let format = OutputFormat(rawValue: name) else {
            throw ProcessingRequestError(400, "unknown output format \"\(text)\" (png, jpeg, webp, gif, avif, jxl, heic or auto)")
        }
        self.format = format
    }

    private mutating func apply(option: String, limits: ProcessingLimits) throws(ProcessingRequestError) {
        func bad(_ reason: String) -> ProcessingRequestError { ProcessingRequestError(400, reason) }
        let parts = option.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let name = parts[0], arguments = Array(parts.dropFirst())
        func count(_ allowed: ClosedRange<Int>) throws(ProcessingRequestError) {
            guard allowed.contains(arguments.count) else {
                let counted = allowed.lowerBound == allowed.upperBound ? "\(allowed.lowerBound)" : "\(allowed.lowerBound) to \(allowed.upperBound)"
                throw bad("\(name) takes \(counted) argument\(allowed.upperBound == 1 ? "" : "s"), not \(arguments.count)")
            }
        }
        func size(_ text: String, _ what: String) throws(ProcessingRequestError) -> Int {
            guard let value = Int(text), value >= 0, value <= limits.maximumDimension else {
                throw bad("\(what) must be a whole number from 0 to \(limits.maximumDimension), not \"\(text)\"")
            }
            return value
        }
        func number(_ text: String, _ what: String, _ range: ClosedRange<Double>) throws(ProcessingRequestError) -> Double {
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                throw bad("\(what) must be a number from \(range.lowerBound.formatted()) to \(range.upperBound.formatted()), not \"\(text)\"")
            }
            return value
        }
        switch name {
        case "rs", "resize":
            try count(1...3)
            guard let mode = ResizeMode(rawValue: arguments[0]) else { throw bad("unknown resize mode \"\(arguments[0])\" (fit, fill, fill-crop, exact)") }
            self.mode = mode
            if arguments.count > 1, !arguments[1].isEmpty { width = try size(arguments[1], "the width") }
            if arguments.count > 2, !arguments[2].isEmpty { height = try size(arguments[2], "the height") }
        case "w", "width":
            try count(1...1)
            width = try size(arguments[0], "the width")
        case "h", "height":
            try count(1...1)
            height = try size(arguments[0], "the height")
        case "g", "gravity":
            try count(1...1)
            let anchors: [String: (Double, Double)] = ["ce": (0.5, 0.5), "no": (0.5, 0), "so": (0.5, 1), "ea": (1, 0.5), "we": (0, 0.5),
                                                       "nowe": (0, 0), "noea": (1, 0), "sowe": (0, 1), "soea": (1, 1)]
            guard let (x, y) = anchors[arguments[0]] else { throw bad("unknown gravity \"\(arguments[0])\" (ce, no, so, ea, we, nowe, noea, sowe, soea)") }
            gravity = .anchor(x: x, y: y)
        case "fp", "focus":
            try count(2...2)
            gravity = .focalPoint(x: try number(arguments[0], "the focal point's x", 0...1), y: try number(arguments[1], "the focal point's y", 0...1))
        case "dpr":
            try count(1...1)
            devicePixelRatio = try number(arguments[0], "the device pixel ratio", 1...limits.maximumDevicePixelRatio)
        case "q", "quality":
            try count(1...1)
            guard let value = Int(arguments[0]), (1...100).contains(value) else { throw bad("the quality must be from 1 to 100, not \"\(arguments[0])\"") }
            quality = value
        case "f", "format":
            try count(1...1)
            try setFormat(arguments[0])
        case "strip":
            try count(0...0)
            stripMetadata = true
        case "sm", "strip_metadata":
            try count(1...1)
            stripMetadata = try Self.bool(arguments[0], name)
        case "kcr", "keep_copyright":
            try count(1...1)
            keepCopyright = try Self.bool(arguments[0], name)
        case "bl", "blur":
            try count(1...1)
            let radius = try number(arguments[0], "the blur radius", 0...limits.maximumBlurRadius)
            blurRadius = radius > 0 ? radius : nil
        case "rot", "rotate":
            try count(1...1)
            rotation = try number(arguments[0], "the rotation", -360...360)
        case "fl", "flip":
            try count(1...1)
            switch arguments[0] {
            case "h": flipHorizontal = true
            case "v": flipVertical = true
            case "hv", "vh": (flipHorizontal, flipVertical) = (true, true)
            default: throw bad("flip takes h, v or hv, not \"\(arguments[0])\"")
            }
        case "gs", "grayscale":
            try count(0...0)
            grayscale = true
        case "tint":
            try count(1...1)
            guard let color = Self.color(hex: arguments[0]) else { throw bad("the tint must be a hex color (RRGGBB or RRGGBBAA), not \"\(arguments[0])\"") }
            tint = color
        case "rc", "round":
            try count(1...1)
            cornerRadius = try number(arguments[0], "the corner radius", 0...Double(limits.maximumDimension))
        case "ff":
            try count(0...0)
            firstFrameOnly = true
        case "cs", "colorspace":
            try count(1...1)
            guard let space = ImageColorSpace(rawValue: arguments[0].lowercased()) else {
                throw bad("the colour space must be srgb or original, not \"\(arguments[0])\"")
            }
            colorSpace = space
        case "info":
            try count(0...0)
            info = true
        default:
            throw bad("unknown option \"\(name)\"")
        }
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

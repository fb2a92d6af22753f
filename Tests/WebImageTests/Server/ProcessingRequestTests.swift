import Foundation
import Testing
import WebImage
@testable import WebImageServer

/// The server's URL grammar and signatures: every option, the three source forms, and a clear
/// 400 for anything malformed or out of range.
struct ProcessingRequestTests {
    func parse(_ path: String) throws -> ProcessingRequest { try ProcessingRequest.parse(path: path).request }

    func refusal(_ path: String) -> String? {
        do {
            _ = try ProcessingRequest.parse(path: path)
            return nil
        } catch {
            #expect(error.status == 400)
            return error.reason
        }
    }

    @Test func optionsAndSources() throws {
        let (signature, request) = try ProcessingRequest.parse(
            path: "/sig/rs:fill-crop:300:200/g:soea/dpr:2/q:80/f:webp/bl:3/rot:90/fl:h/gs/tint:ff000080/rc:12/ff/strip/plain/https%3A%2F%2Forigin.example%2Fa%20b.jpg")
        #expect(signature == "sig")
        #expect(request.mode == .fill && request.width == 300 && request.height == 200 && request.gravity == .anchor(x: 1, y: 1))
        #expect(request.devicePixelRatio == 2 && request.pixelBox == (600, 400))
        #expect(request.quality == 80 && request.format == .webp && request.blurRadius == 3 && request.rotation == 90)
        #expect(request.flipHorizontal && !request.flipVertical && request.grayscale && request.firstFrameOnly && request.stripMetadata == true)
        #expect(request.tint == Color(red: 1, green: 0, blue: 0, alpha: 128.0 / 255))
        #expect(request.cornerRadius == 12)
        #expect(request.source.absoluteString == "https://origin.example/a%20b.jpg")
        #expect(request.signedPath.hasPrefix("/rs:fill-crop:300:200/"))
        // A plain URL with its slashes, and the format after @.
        let plain = try parse("/s/w:100/plain/http://origin.example/dir/a.png@jpg")
        #expect(plain.source.absoluteString == "http://origin.example/dir/a.png" && plain.format == .jpeg && plain.width == 100)
        // base64url, split by slashes, with an extension; a focal point.
        let encoded = Base64URL.encode(Array("http://origin.example/images/curiosity.jpg".utf8))
        let split = encoded.prefix(10) + "/" + encoded.dropFirst(10)
        let base64 = try parse("/s/fp:0.25:0.75/\(split).png")
        #expect(base64.source.absoluteString == "http://origin.example/images/curiosity.jpg" && base64.format == .png)
        #expect(base64.gravity == .focalPoint(x: 0.25, y: 0.75))
        #expect(try parse("/s/info/plain/http://o/a.gif").info)
        #expect(try parse("/s/rs:fit:0:50/plain/http://o/a.gif").height == 50, "a free side")
    }

    @Test func malformedAndOutOfRangeRequestsAreA400WithAReason() {
        let cases: [(String, String)] = [
            ("", "must start with /SIGNATURE/"),
            ("//plain/http://o/a.jpg", "must start with /SIGNATURE/"),
            ("/s/rs:fit:100:100", "has no source"),
            ("/s/zoomed:2/plain/http://o/a.jpg", "unknown option \"zoomed\""),
            ("/s/rs:stretch:1:1/plain/http://o/a.jpg", "unknown resize mode"),
            ("/s/rs:fit:-5:10/plain/http://o/a.jpg", "the width must be a whole number"),
            ("/s/w:100000/plain/http://o/a.jpg", "from 0 to 4096"),
            ("/s/h:abc/plain/http://o/a.jpg", "the height must be a whole number"),
            ("/s/rs:exact:0:100/plain/http://o/a.jpg", "needs both a width and a height"),
            ("/s/rs:force:100/plain/http://o/a.jpg", "needs both a width and a height"),
            ("/s/w:4000/dpr:2/plain/http://o/a.jpg", "larger than 4096 pixels"),
            ("/s/q:0/plain/http://o/a.jpg", "quality must be from 1 to 100"),
            ("/s/q:101/plain/http://o/a.jpg", "quality must be from 1 to 100"),
            ("/s/dpr:9/plain/http://o/a.jpg", "device pixel ratio"),
            ("/s/g:middle/plain/http://o/a.jpg", "unknown gravity"),
            ("/s/fp:2:0/plain/http://o/a.jpg", "focal point's x"),
            ("/s/bl:1e9/plain/http://o/a.jpg", "blur radius"),
            ("/s/fl:x/plain/http://o/a.jpg", "flip takes h, v or hv"),
            ("/s/tint:red/plain/http://o/a.jpg", "hex color"),
            ("/s/f:tiff/plain/http://o/a.jpg", "unknown output format"),
            ("/s/w/plain/http://o/a.jpg", "w takes 1 argument, not 0"),
            ("/s/w:1:2/plain/http://o/a.jpg", "w takes 1 argument, not 2"),
            ("/s/gs:1/plain/http://o/a.jpg", "gs takes 0 arguments, not 1"),
            ("/s/plain/http%3A%2F%2Fo%2F%ZZ", "not valid percent-encoding"),
            ("/s/plain/", "not a URL"),
            ("/s/!!!notbase64", "not valid base64url"),
            ("/s/aHR0cDovL28vYS5qcGc.bmp", "unknown output format"),
            ("/s/z:0/plain/http://o/a.jpg", "the zoom must be"),
            ("/s/rs:zap:1:1/plain/http://o/a.jpg", "unknown resize mode \"zap\""),
            ("/s/rt:zap/plain/http://o/a.jpg", "unknown resize mode"),
            ("/s/pd:5000/plain/http://o/a.jpg", "the padding must be"),
            ("/s/bg:zz/plain/http://o/a.jpg", "the background must be"),
            ("/s/bg:1:2:300/plain/http://o/a.jpg", "the background's channel"),
            ("/s/t:300/plain/http://o/a.jpg", "the trim threshold"),
            ("/s/sh:-1/plain/http://o/a.jpg", "the sharpen sigma"),
            ("/s/pix:5000/plain/http://o/a.jpg", "the pixelate size"),
            ("/s/br:300/plain/http://o/a.jpg", "the brightness"),
            ("/s/co:11/plain/http://o/a.jpg", "the contrast"),
            ("/s/sa:-1/plain/http://o/a.jpg", "the saturation"),
            ("/s/a:0:0:x/plain/http://o/a.jpg", "the saturation"),
            ("/s/wm:2/plain/http://o/a.jpg", "the watermark opacity"),
            ("/s/wm:0.5:sm/plain/http://o/a.jpg", "the watermark position"),
            ("/s/mb:-5/plain/http://o/a.jpg", "max_bytes"),
            ("/s/fq:tiff:50/plain/http://o/a.jpg", "unknown format \"tiff\" in fq"),
            ("/s/fq:jpeg/plain/http://o/a.jpg", "pairs of a format and a quality"),
            ("/s/exp:abc/plain/http://o/a.jpg", "the expiry"),
            ("/s/fn:a%2Fb/plain/http://o/a.jpg", "the filename"),
            ("/s/att:maybe/plain/http://o/a.jpg", "att takes 1 or 0"),
            ("/s/pr:none/plain/http://o/a.jpg", "unknown preset \"none\""),
            ("/s/c:10/plain/http://o/a.jpg", "c takes 2 to 5 arguments"),
            ("/s/c:10:10:up/plain/http://o/a.jpg", "unknown gravity \"up\""),
            ("/s/g:sm:1:2/plain/http://o/a.jpg", "gravity takes a type and its x and y offsets"),
            ("/s/ex:1:sm/plain/http://o/a.jpg", "extend takes 1 and a gravity"),
            ("/s/el:2/plain/http://o/a.jpg", "el takes 1 or 0"),
            ("/s/mw:5000/plain/http://o/a.jpg", "the minimum width"),
            ("/s/mw:3000/dpr:2/plain/http://o/a.jpg", "larger than 4096 pixels"),
        ]
        for (path, reason) in cases {
            let got = refusal(path)
            #expect(got?.contains(reason) == true, "\(path): \(got ?? "accepted")")
        }
    }

    /// The signature scheme is imgproxy's: base64url without padding of HMAC-SHA256(key, salt +
    /// path). The expected value was computed independently with Python's `hmac` module.
    @Test func signaturesAreImgproxys() throws {
        let signer = URLSigner(key: try #require(URLSigner.bytes(hex: "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881")),
                               salt: try #require(URLSigner.bytes(hex: "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5")))
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        #expect(signer.signature(of: path) == "90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf40")
        #expect(signer.isValid("90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf40", for: path))
        #expect(!signer.isValid("90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf41", for: path))
        #expect(!signer.isValid("", for: path) && !signer.isValid("not base64!", for: path))
        #expect(!signer.isValid(signer.signature(of: path), for: path + "x"))
        #expect(signer.sign("/w:10/plain/http://o/a.jpg").hasPrefix("/" + signer.signature(of: "/w:10/plain/http://o/a.jpg") + "/w:10/"))
        #expect(URLSigner.bytes(hex: "abc") == nil && URLSigner.bytes(hex: "zz") == nil && URLSigner.bytes(hex: "") == nil)
    }

    @Test func presetsApplyTheirOptionsAndTheDefaultOneFirst() throws {
        var limits = ProcessingLimits()
        limits.presets = ["default": "f:png/q:70", "thumb": "rs:fill:100:80/g:sm", "sharp": "sh:1"]
        let request = try ProcessingRequest.parse(path: "/s/pr:thumb:sharp/q:90/plain/http://o/a.jpg", limits: limits).request
        #expect(request.format == .png && request.quality == 90, "the default first, the path's own options after it")
        #expect(request.mode == .fill && request.width == 100 && request.height == 80 && request.gravity == .smart && request.sharpen == 1)
        limits.presets["loop"] = "pr:thumb"
        #expect(throws: ProcessingRequestError.self) { try ProcessingRequest.parse(path: "/s/pr:loop/plain/http://o/a.jpg", limits: limits) }
        var configuration = ServerConfiguration()
        configuration.presets = ["bad": "rs:zap:1:1"]
        #expect(throws: ServerConfigurationError.self) { try configuration.processingLimits() }
        configuration.presets = ["nested": "preset:other", "other": "q:5"]
        #expect(throws: ServerConfigurationError.self) { try configuration.processingLimits() }
        configuration.presets = ["fine": "rs:fit:10:10/ex:1/bg:ffffff"]
        #expect(try configuration.processingLimits().presets["fine"] != nil)
    }

    @Test func imgproxysNamesAndShapesAreRead() throws {
        func parse(_ path: String) throws -> ProcessingRequest { try ProcessingRequest.parse(path: "/s" + path + "/plain/http://o/a.jpg").request }
        let r = try parse("/rs:fill-down:300:200:1:1/g:noea:10:-5/mw:50/mh:40/z:1.5:2/c:0.5:100:sowe/pd:1:2:3:4/bg:10:20:30")
        #expect(r.mode == .fillDown && r.width == 300 && r.height == 200 && r.enlarge && r.extend == .anchor(x: 0.5, y: 0.5))
        #expect(r.gravity == .anchor(x: 1, y: 0) && r.gravityOffsetX == 10 && r.gravityOffsetY == -5 && r.minWidth == 50 && r.minHeight == 40)
        #expect(r.zoomX == 1.5 && r.zoomY == 2 && r.crop == .init(width: 0.5, height: 100, gravity: .anchor(x: 0, y: 1)))
        #expect(r.padding == .init(top: 1, right: 2, bottom: 3, left: 4) && r.background == Color(red: 10 / 255, green: 20 / 255, blue: 30 / 255))
        let short = try parse("/pd:5:6/s:20:30/el:t/ex:1:soea/g:fp:0.2:0.8/t:10:ff0000:1:0/sh:0.5/pix:6/a:10:1.1:0.9/wm:0.5:re:0:0:0.25")
        #expect(short.padding == .init(top: 5, right: 6, bottom: 5, left: 6) && short.width == 20 && short.height == 30 && short.enlarge)
        #expect(short.extend == .anchor(x: 1, y: 1) && short.gravity == .focalPoint(x: 0.2, y: 0.8))
        #expect(short.trim == .init(threshold: 10, color: Color(red: 1, green: 0, blue: 0), equalHorizontal: true, equalVertical: false))
        #expect(short.sharpen == 0.5 && short.pixelate == 6 && short.brightness == 10 && short.contrast == 1.1 && short.saturation == 0.9)
        #expect(short.watermark == .init(opacity: 0.5, position: nil, offsetX: 0, offsetY: 0, scale: 0.25))
        let output = try parse("/fq:jpg:60:webp:70/mb:5000/exp:4102444800/fn:holiday%20photo/att:1/raw/rt:auto")
        #expect(output.formatQuality == [.jpeg: 60, .webp: 70] && output.maximumBytes == 5000 && output.expires == 4_102_444_800)
        #expect(output.filename == "holiday photo" && output.attachment && output.raw && output.mode == .auto)
        #expect(try parse("/fn:aMO2LnBuZw:1").filename == "hö.png", "a base64url file name")
        #expect(try parse("/rs:exact:10:10").mode == .force && (try parse("/rs:fill-crop:10:10")).mode == .fill)
    }

    @Test func configurationsAreCheckedAtStart() throws {
        var configuration = ServerConfiguration()
        #expect(throws: ServerConfigurationError.self) { try configuration.signer() }
        configuration.key = "abcd"
        configuration.salt = "not hex"
        #expect(throws: ServerConfigurationError.self) { try configuration.signer() }
        configuration.insecure = true
        #expect(try configuration.signer() == nil)
        configuration.allowedNetworks = ["10.0.0.0/8", "nonsense"]
        #expect(throws: ServerConfigurationError.self) { try configuration.networks() }
        let decoded = try ServerConfiguration.decode(Data(#"{"port": 9000, "allowedSources": ["*.example.com"], "insecure": true}"#.utf8))
        #expect(decoded.port == 9000 && decoded.allowedSources == ["*.example.com"] && decoded.insecure && decoded.host == "127.0.0.1")
        #expect(throws: (any Error).self) { try ServerConfiguration.decode(Data(#"{"port": "x"}"#.utf8)) }
    }

    /// 20,000 paths drawn from the grammar's own words, valid and not, in any order and number:
    /// each is a request within every limit or a 400 with a reason; none crashes or passes a
    /// limit by combining options (a width with a device pixel ratio, a resize with w: and h:).
    @Test func anyPathFromTheGrammarsWordsIsARequestWithinTheLimitsOrA400() {
        var random = SeededGenerator(seed: 36)
        // Each option's words: valid ones at the edges of its range, and a few just past them.
        let size = ["", "0", "1", "1024", "1025", "4096", "4097", "-1", "x", "99999999999999999999"]
        let ratio = ["1", "2", "2.5", "4", "4.0001", "0.5", "nan", "inf"]
        let words: [String: [String]] = [
            "rs": ["fit", "fill", "fill-crop", "exact", "stretch"] , "w": size, "width": size, "h": size, "height": size,
            "g": ["ce", "soea", "up"], "fp": ["0", "1", "0.5", "1.1", "-0"], "dpr": ratio, "q": ["1", "100", "0", "101", "x"],
            "f": ["webp", "jpg", "png", "avif", "bmp"], "strip": [], "bl": ["0", "100", "100.5", "nan", "-1"],
            "rot": ["360", "-360", "-361", "1e3", "inf"], "fl": ["h", "v", "hv", "x"], "gs": [], "tint": ["ff000080", "#00ff00", "GGGGGG", "f"],
            "rc": ["0", "4096", "4097", "-1"], "ff": [], "cs": ["srgb", "original", "p3"], "info": [], "zoom": ["2", "0", "16", "17", "x"], "el": ["1", "0", "x"], "ex": ["1", "0"], "mw": size, "mh": size,
            "c": ["0", "0.5", "100", "-1"], "pd": ["0", "10", "4097"], "bg": ["ffffff", "zz"], "t": ["10", "256"], "sh": ["1", "0", "-1"],
            "pix": ["8", "4097"], "br": ["10", "-256"], "co": ["1.5", "11"], "sa": ["0", "-1"], "mb": ["1000", "-1"],
            "exp": ["0", "99999999999"], "fn": ["name", "a/b"], "att": ["1", "x"], "raw": [], "rt": ["fill-down", "auto", "zap"],
            "sm": ["1", "0", "t", "false", "yes"], "kcr": ["true", "f", "2"],
        ]
        let names = words.keys.sorted()
        let sources = ["plain/http://o/a.jpg", "plain/http%3A%2F%2Fo%2Fa.png@webp", "plain/", "plain/%zz",
                       Base64URL.encode(Array("http://o/b.gif".utf8)) + ".png", "aGVsbG8", "plain/http://o/a.jpg@bmp", ""]
        var accepted = 0
        for _ in 0..<20_000 {
            var segments: [String] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let name = names.randomElement(using: &random)!
                var option = name
                // Mostly the number of arguments the option takes; sometimes one more or less.
                let pool = words[name]!.isEmpty ? ["1"] : words[name]!
                let count = name == "rs" || name == "fp" ? Int.random(in: 1...3, using: &random)
                    : words[name]!.isEmpty ? Int.random(in: 0...5, using: &random) / 5 : Int.random(in: 0...5, using: &random) == 0 ? 2 : 1
                for index in 0..<count {
                    option += ":" + (name == "rs" && index > 0 ? size : pool).randomElement(using: &random)!
                }
                segments.append(option)
            }
            segments.append(sources.randomElement(using: &random)!)
            let path = "/sig/" + segments.joined(separator: "/")
            do {
                let request = try ProcessingRequest.parse(path: path).request
                accepted += 1
                let limits = ProcessingLimits()
                #expect((0...limits.maximumDimension).contains(request.width) && (0...limits.maximumDimension).contains(request.height), "\(path)")
                #expect(request.pixelBox.width <= limits.maximumDimension && request.pixelBox.height <= limits.maximumDimension, "\(path)")
                #expect((1...limits.maximumDevicePixelRatio).contains(request.devicePixelRatio), "\(path)")
                #expect(request.blurRadius.map { $0 > 0 && $0 <= limits.maximumBlurRadius } ?? true, "\(path)")
                #expect(request.cornerRadius.map { $0 >= 0 && $0 <= Double(limits.maximumDimension) } ?? true, "\(path)")
                #expect(request.rotation.map { $0.isFinite && abs($0) <= 360 } ?? true, "\(path)")
                #expect(request.quality.map { (1...100).contains($0) } ?? true, "\(path)")
                #expect((0.01...16).contains(request.zoomX) && (0.01...16).contains(request.zoomY), "\(path)")
                #expect(Double(max(request.minWidth, request.minHeight)) * request.devicePixelRatio <= Double(limits.maximumDimension), "\(path)")
                #expect(request.pixelate.map { $0 > 1 && $0 <= limits.maximumDimension } ?? true, "\(path)")
                #expect(request.maximumBytes.map { $0 > 0 } ?? true, "\(path)")
                // After options only (a word with neither a colon nor a flag's name begins a
                // base64url source, as in imgproxy), the source is the one the path ends with.
                // A scheme is the source policy's to check: "hello" is refused there, with a 403.
                let expected = ["plain/http://o/a.jpg": "http://o/a.jpg", "plain/http%3A%2F%2Fo%2Fa.png@webp": "http://o/a.png",
                                Base64URL.encode(Array("http://o/b.gif".utf8)) + ".png": "http://o/b.gif", "aGVsbG8": "hello"]
                if segments.dropLast().allSatisfy({ $0.contains(":") || ProcessingOptions.flags.contains($0) }) {
                    #expect(request.source.absoluteString == expected[segments.last!], "\(path)")
                }
            } catch {
                #expect(error.status == 400 && !error.reason.isEmpty, "\(path)")
            }
        }
        // The draw reaches both outcomes often: the test is not all refusals.
        #expect(accepted > 500, "accepted \(accepted) of 20,000")
    }
}

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
        #expect(request.mode == .fillCrop && request.width == 300 && request.height == 200 && request.gravity == .anchor(x: 1, y: 1))
        #expect(request.devicePixelRatio == 2 && request.pixelBox == (600, 400))
        #expect(request.quality == 80 && request.format == .webp && request.blurRadius == 3 && request.rotation == 90)
        #expect(request.flipHorizontal && !request.flipVertical && request.grayscale && request.firstFrameOnly && request.stripMetadata)
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
            ("/s/zoom:2/plain/http://o/a.jpg", "unknown option \"zoom\""),
            ("/s/rs:stretch:1:1/plain/http://o/a.jpg", "unknown resize mode"),
            ("/s/rs:fit:-5:10/plain/http://o/a.jpg", "the width must be a whole number"),
            ("/s/w:100000/plain/http://o/a.jpg", "from 0 to 4096"),
            ("/s/h:abc/plain/http://o/a.jpg", "the height must be a whole number"),
            ("/s/rs:exact:0:100/plain/http://o/a.jpg", "needs both a width and a height"),
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
}

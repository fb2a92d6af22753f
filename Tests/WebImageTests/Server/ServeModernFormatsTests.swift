import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer
import WebImageAVIF
import WebImageHEIF
import WebImageJXL

/// `webimage serve` (which registers the AVIF, HEIF and JPEG XL plug-ins) reads today's formats
/// as sources and writes `f:avif`, `f:jxl`, `f:heic`, and `f:auto` picks AVIF, then WebP, then
/// the source's format from `Accept`, with `Vary: Accept`.
@Suite(.serialized) struct ServeModernFormatsTests {
    @Test func modernSourcesAndOutputsThroughTheCommand() async throws {
        let origin = TestHTTPServer()
        try await origin.start()
        origin.route("/a.png", .respond(body: ManagerHarness.png))
        origin.route("/p.heic", .respond(body: try ModernCorpus.data("heic/8bit_444_q90.heic")))
        origin.route("/s.avif", .respond(body: try ModernCorpus.data("avif/sequence_lossless_4frames.avif")))
        origin.route("/o.jxl", .respond(body: try ModernCorpus.data("jxl/orientation6_lossless.jxl")))
        let gif = try Corpus.data("gif/chi.gif")
        origin.route("/a.gif", .respond(contentType: "image/gif", body: gif))
        let directory = TemporaryDirectory("serve-modern")
        defer { directory.remove() }
        let config = directory.url.appendingPathComponent("serve.json")
        try Data("""
            {"port": 0, "insecure": true, "allowedNetworks": ["127.0.0.1"], "cacheDirectory": "\(directory.url.appendingPathComponent("cache").path)"}
            """.utf8).write(to: config)
        let running = try CLIRunner.start(["serve", "--config", config.path])
        let (port, printed) = try await running.listeningPort()
        #expect(port > 0, "\(printed)")
        func get(_ options: String, _ source: String, accept: String? = nil) async throws -> Curl.Reply {
            let url = URL(string: "http://127.0.0.1:\(port)/unsafe/\(options)/plain/" + origin.url(source).absoluteString)!
            return try await Curl.get(url, headers: accept.map { ["Accept": $0] } ?? [:])
        }
        let coders = ModernCorpus.coders
        // Explicit formats.
        for (format, mime) in [(ImageFormat.avif, "image/avif"), (.jxl, "image/jxl"), (.heic, "image/heic")] {
            let reply = try await get("w:32/f:\(format.rawValue)", "/a.png")
            #expect(reply.status == 200 && reply.headers["content-type"] == mime, "\(format): \(reply.status)")
            let image = try coders.decode(reply.body)
            #expect(image.format == format && image.width == 32 && image.height == 24, "\(format)")
        }
        // f:auto: AVIF first, then WebP, then the source's format; Vary: Accept each time.
        let avif = try await get("w:16/f:auto", "/a.png", accept: "image/avif,image/webp,*/*")
        #expect(avif.headers["content-type"] == "image/avif" && avif.headers["vary"] == "Accept")
        let webp = try await get("w:16/f:auto", "/a.png", accept: "image/webp,*/*")
        #expect(webp.headers["content-type"] == "image/webp" && webp.headers["vary"] == "Accept")
        let source = try await get("w:16/f:auto", "/a.png", accept: "*/*")
        #expect(source.headers["content-type"] == "image/png" && source.headers["vary"] == "Accept")
        // Modern sources: an iPhone-style HEIC to JPEG, an AVIF sequence kept animated as WebP,
        // a JPEG XL turned upright by its orientation.
        let heic = try await get("rs:fit:32:32/f:jpeg", "/p.heic")
        let heicImage = try Image(data: heic.body)
        #expect(heic.status == 200 && heicImage.width == 32)
        let sequence = try coders.decode(try await get("w:32/f:webp", "/s.avif").body)
        #expect(sequence.frameCount == 4 && sequence.frameDurations.map { ($0 * 1000).rounded() } == [100, 250, 40, 500])
        let upright = try Image(data: try await get("f:png", "/o.jxl").body)
        #expect(upright.width == 40 && upright.height == 64)
        // A GIF converted to AVIF keeps its animation: every frame and its duration.
        let animated = try coders.decode(try await get("rs:fit:40:40/f:avif", "/a.gif").body)
        let frames = try Image(data: gif)
        #expect(animated.format == .avif && animated.frameCount == frames.frameCount, "\(animated.frameCount) of \(frames.frameCount) frames")
        #expect(animated.frameDurations.map { ($0 * 1000).rounded() } == frames.frameDurations.map { ($0 * 1000).rounded() })
        // A HEIC source with no format asked for is not sent as HEIC (browsers do not show it).
        let unasked = try await get("w:16", "/p.heic")
        #expect(unasked.headers["content-type"] == "image/png")
        running.signal(SIGTERM)
        _ = running.wait()
        await origin.stop()
    }
}

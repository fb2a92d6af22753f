import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy's output options through `webimage serve`: presets, per-format quality,
/// `max_bytes`, URL expiry, file names and attachments, `raw`, the fallback image, the
/// watermark, and animations kept when converted.
@Suite(.serialized) struct ServerOutputOptionsTests {
    static let png = ServerGeometryOptionsTests.png
    static let photo = try! Image(bitmap: TransformerTests.large).encoded(as: .jpeg, quality: 0.95)

    @Test func presetsAndTheDefaultPreset() async throws {
        let h = try await ServerHarness { $0.presets = ["default": "f:png", "thumb": "rs:fill:10:10"] }
        h.origin.route("/a.png", .respond(body: Self.png))
        let thumb = try await Curl.get(h.url(options: "pr:thumb", source: "/a.png"))
        #expect(thumb.status == 200 && thumb.headers["content-type"] == "image/png")
        #expect(try Image(data: thumb.body).width == 10 && (try Image(data: thumb.body)).height == 10)
        #expect(try await Curl.get(h.url(options: "preset:thumb/f:webp", source: "/a.png")).headers["content-type"] == "image/webp")
        let unknown = try await Curl.get(h.url(options: "pr:none", source: "/a.png"))
        #expect(unknown.status == 400 && String(decoding: unknown.body, as: UTF8.self).contains("unknown preset"))
        await h.finish()
        // A preset that chooses the format from Accept: each Accept its own result, Vary: Accept.
        let auto = try await ServerHarness { $0.presets = ["default": "f:auto"]; $0.autoFormats = ["webp"] }
        auto.origin.route("/a.png", .respond(body: Self.png))
        let webp = try await Curl.get(auto.url(options: "w:10", source: "/a.png"), headers: ["Accept": "image/webp"])
        let plain = try await Curl.get(auto.url(options: "w:10", source: "/a.png"), headers: ["Accept": "image/png"])
        #expect(webp.headers["content-type"] == "image/webp" && plain.headers["content-type"] == "image/png")
        #expect(webp.headers["vary"] == "Accept" && plain.headers["vary"] == "Accept")
        #expect(ImageProcessor.AutoInPresets(["thumb": "rs:fit:9:9/f:auto"]) == .whenNamed && ImageProcessor.AutoInPresets([:]) == .never)
        await auto.finish()
    }

    @Test func qualityPerFormatAndMaxBytes() async throws {
        let h = try await ServerHarness { $0.formatQuality = ["jpeg": 20, "webp": 90] }
        h.origin.route("/photo.jpg", .respond(contentType: "image/jpeg", body: Self.photo))
        let configured = try await Curl.get(h.url(options: "w:400", source: "/photo.jpg")).body.count
        let asked = try await Curl.get(h.url(options: "w:400/q:90", source: "/photo.jpg")).body.count
        let perFormat = try await Curl.get(h.url(options: "w:400/q:90/fq:jpeg:20", source: "/photo.jpg")).body.count
        #expect(configured < asked / 2, "the configured JPEG quality 20: \(configured) bytes against \(asked) at q:90")
        #expect(perFormat == configured, "fq: names the format's quality")
        // max_bytes: the quality steps down until the result fits.
        let bounded = try await Curl.get(h.url(options: "w:400/q:95/mb:12000", source: "/photo.jpg"))
        #expect(bounded.status == 200 && bounded.body.count <= 12000, "\(bounded.body.count) bytes")
        #expect(try Image(data: bounded.body).width == 400)
        let unbounded = try await Curl.get(h.url(options: "w:400/q:95", source: "/photo.jpg")).body.count
        #expect(unbounded > 12000, "the bound mattered: \(unbounded) bytes without it")
        // A bound the lowest quality cannot meet: the lowest quality's result.
        let tiny = try await Curl.get(h.url(options: "w:400/mb:100", source: "/photo.jpg"))
        #expect(tiny.status == 200 && tiny.body.count > 100)
        #expect(throws: ServerConfigurationError.self) {
            var configuration = ServerConfiguration()
            configuration.formatQuality = ["jpeg": 0]
            _ = try configuration.resultDefaults()
        }
        await h.finish()
    }

    @Test func expiryFileNamesAttachmentsAndRaw() async throws {
        let h = try await ServerHarness()
        let exif = try MetadataFixtures.jpeg()
        h.origin.route("/photo.jpg", .respond(contentType: "image/jpeg", body: exif))
        let now = Int(Date().timeIntervalSince1970)
        let expired = try await Curl.get(h.url(options: "exp:\(now - 10)/w:10", source: "/photo.jpg"))
        #expect(expired.status == 404 && String(decoding: expired.body, as: UTF8.self).contains("expired"))
        #expect(try await Curl.get(h.url(options: "exp:\(now + 600)/w:10", source: "/photo.jpg")).status == 200)
        #expect(h.origin.requestCount("/photo.jpg") == 1, "an expired URL fetches nothing")
        // A result kept in the response cache is not answered past its URL's expiry either.
        let soon = h.url(options: "exp:\(now + 2)/w:12", source: "/photo.jpg")
        #expect(try await Curl.get(soon).status == 200)
        #expect(try await Curl.get(soon).status == 200)
        try await Task.sleep(for: .milliseconds(2100))
        #expect(try await Curl.get(soon).status == 404)
        let named = try await Curl.get(h.url(options: "w:10/fn:holiday/f:webp", source: "/photo.jpg"))
        #expect(named.headers["content-disposition"] == "inline; filename=\"holiday.webp\"")
        let attached = try await Curl.get(h.url(options: "w:10/att:1", source: "/photo.jpg"))
        #expect(attached.headers["content-disposition"] == "attachment; filename=\"photo.jpg\"")
        let unicode = try await Curl.get(h.url(options: "w:10/fn:aMO2:1", source: "/photo.jpg"))
        #expect(unicode.headers["content-disposition"] == "inline; filename=\"h_.jpg\"; filename*=UTF-8''h%C3%B6%2Ejpg")
        // raw: the source's own bytes, metadata and all, as the origin sent them.
        let raw = try await Curl.get(h.url(options: "raw", source: "/photo.jpg"))
        #expect(raw.status == 200 && raw.body == exif && raw.headers["content-type"] == "image/jpeg")
        h.origin.route("/text", .respond(contentType: "text/plain", body: Data("hello".utf8)))
        #expect(try await Curl.get(h.url(options: "raw", source: "/text")).status == 422)
        await h.finish()
    }

    @Test func aFailingSourceIsAnsweredWithTheFallbackImage() async throws {
        let folder = TemporaryDirectory("fallback")
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("fallback.png").path
        try Self.png.write(to: URL(fileURLWithPath: path))
        let h = try await ServerHarness { $0.fallbackImage = path; $0.fallbackImageStatus = 203 }
        h.origin.route("/gone.png", .respond(status: 404, body: Data("no".utf8)))
        h.origin.route("/broken.png", .respond(body: Data("not an image at all".utf8)))
        for name in ["/gone.png", "/broken.png"] {
            let reply = try await Curl.get(h.url(options: "rs:fill:20:20/f:webp", source: name))
            #expect(reply.status == 203 && reply.headers["content-type"] == "image/webp", "\(name): \(reply.status)")
            #expect(reply.headers["x-fallback-reason"]?.hasPrefix(name == "/gone.png" ? "404" : "422") == true, "\(reply.headers)")
            #expect(reply.headers["cache-control"] == "no-store")
            #expect(try Image(data: reply.body).width == 20)
        }
        var configuration = ServerConfiguration()
        configuration.fallbackImage = folder.url.appendingPathComponent("missing.png").path
        #expect(throws: ServerConfigurationError.self) { try configuration.resultDefaults() }
        await h.finish()
    }

    @Test func theWatermarkIsDrawnWhereAsked() async throws {
        let folder = TemporaryDirectory("watermark")
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("mark.png").path
        let red = Bitmap(width: 8, height: 8, rgba: [UInt8](repeating: 0, count: 256).enumerated().map { $0.offset % 4 == 0 || $0.offset % 4 == 3 ? 255 : 0 })
        try Image(bitmap: red).encoded(as: .png).write(to: URL(fileURLWithPath: path))
        let h = try await ServerHarness { $0.watermark = path }
        h.origin.route("/a.png", .respond(body: Self.png))
        let corner = try Image(data: try await Curl.get(h.url(options: "wm:1:soea:2:2/f:png", source: "/a.png")).body).bitmap
        #expect(corner[64 - 3, 48 - 3] == (255, 0, 0, 255) && corner[64 - 1, 48 - 1] != (255, 0, 0, 255) && corner[0, 0] != (255, 0, 0, 255))
        let half = try Image(data: try await Curl.get(h.url(options: "wm:0.5:nowe/f:png", source: "/a.png")).body).bitmap
        #expect(half[2, 2].r > 120 && half[2, 2].r < 250 && half[2, 2].a == 255)
        let tiled = try Image(data: try await Curl.get(h.url(options: "wm:1:re/f:png", source: "/a.png")).body).bitmap
        #expect(tiled[0, 0] == (255, 0, 0, 255) && tiled[60, 44] == (255, 0, 0, 255))
        let scaled = try Image(data: try await Curl.get(h.url(options: "wm:1:nowe:0:0:0.5/f:png", source: "/a.png")).body).bitmap
        #expect(scaled[31, 31] == (255, 0, 0, 255) && scaled[33, 33] != (255, 0, 0, 255), "scaled to half the width: 32x32")
        // Without a configured watermark, wm: changes nothing.
        let plain = try await ServerHarness()
        plain.origin.route("/a.png", .respond(body: Self.png))
        #expect(try await Curl.get(plain.url(options: "wm:1/f:png", source: "/a.png")).status == 200)
        await plain.finish()
        await h.finish()
    }

    @Test func anAnimationConvertedKeepsItsFrames() async throws {
        let gif = try Corpus.data("gif/chi.gif")
        let frames = try Image(data: gif).frameCount
        let h = try await ServerHarness()
        h.origin.route("/a.gif", .respond(contentType: "image/gif", body: gif))
        // WebP (AVIF through the command, which registers its plug-in: ServeModernFormatsTests).
        // libwebp folds a frame identical to the one before it into that one's duration: the
        // animation plays the same, in as long.
        let reply = try await Curl.get(h.url(options: "rs:fit:40:40/f:webp", source: "/a.gif"))
        #expect(reply.status == 200 && reply.headers["content-type"] == "image/webp")
        let converted = try ImageCoders.shared.decode(reply.body)
        let source = try Image(data: gif)
        #expect(converted.isAnimated && converted.frameCount <= frames && converted.frameCount > frames / 2, "\(converted.frameCount) of \(frames)")
        #expect(abs(converted.frameDurations.reduce(0, +) - source.frameDurations.reduce(0, +)) < 0.01)
        #expect(converted.width == 40 || converted.height == 40)
        await h.finish()
    }
}

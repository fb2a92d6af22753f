import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// `webimage serve` against a real origin and a real client: signatures, processing, the
/// security defaults, origin faults, sharing, the busy queue and HTTP caching.
@Suite(.serialized) struct ImageServerTests {
    static let png = ManagerHarness.png   // 64x48

    @Test func aSignedRequestIsProcessedAndCachedByTheClient() async throws {
        let h = try await ServerHarness()
        h.origin.route("/a.png", .respond(body: Self.png))
        let url = h.url(options: "rs:fit:32:32", source: "/a.png")
        let reply = try await Curl.get(url)
        #expect(reply.status == 200 && reply.headers["content-type"] == "image/png")
        let image = try Image(data: reply.body)
        #expect(image.width == 32 && image.height == 24, "fit keeps the aspect ratio")
        let etag = try #require(reply.headers["etag"])
        #expect(reply.headers["cache-control"] == "public, max-age=31536000")
        #expect(reply.headers["vary"] == nil)
        // The client's revalidation: 304, no body.
        let again = try await Curl.get(url, headers: ["If-None-Match": etag])
        #expect(again.status == 304 && again.body.isEmpty)
        // Other operations and the crop.
        let crop = try Image(data: try await Curl.get(h.url(options: "rs:fill-crop:20:20/g:nowe/gs/fl:h", source: "/a.png")).body)
        #expect(crop.width == 20 && crop.height == 20)
        // A crop with a free side is thumbor's WxH with a 0: the other side follows the aspect ratio.
        let free = try Image(data: try await Curl.get(h.url(options: "rs:fill-crop:0:12", source: "/a.png")).body)
        #expect(free.width == 16 && free.height == 12)
        let fill = try Image(data: try await Curl.get(h.url(options: "rs:cover:20:20", source: "/a.png")).body)
        #expect(fill.width == 27 && fill.height == 20, "cover covers the box and does not crop")
        let exact = try Image(data: try await Curl.get(h.url(options: "rs:exact:10:30/dpr:2", source: "/a.png")).body)
        #expect(exact.width == 20 && exact.height == 60)
        #expect(h.origin.requestCount("/a.png") == 1, "every result came from one fetch of the source")
        // On disk only the source: results are kept encoded and decoded in memory, never encoded twice.
        await h.server.manager.waitForPendingStores()
        let cache = try #require(h.server.manager.cache as? ImageCache)
        #expect(await cache.containsImage(forKey: h.origin.url("/a.png").absoluteString, in: .disk) == .disk)
        #expect(await cache.disk.count() == 1)
        await h.finish()
    }

    @Test func formatsFromTheRequestAndItsAccept() async throws {
        let h = try await ServerHarness()
        h.origin.route("/a.png", .respond(body: Self.png))
        let auto = h.url(options: "w:16/f:auto", source: "/a.png")
        let webp = try await Curl.get(auto, headers: ["Accept": "image/avif,image/webp,*/*"])
        #expect(webp.status == 200 && webp.headers["content-type"] == "image/webp" && webp.headers["vary"] == "Accept")
        #expect(try Image(data: webp.body).format == .webp)
        let plain = try await Curl.get(auto, headers: ["Accept": "image/png"])
        #expect(plain.headers["content-type"] == "image/png" && plain.headers["vary"] == "Accept")
        let jpeg = try await Curl.get(h.url(options: "w:16/q:50", source: "/a.png@jpg"))
        let jpegImage = try Image(data: jpeg.body)
        #expect(jpeg.headers["content-type"] == "image/jpeg" && jpegImage.width == 16)
        let info = try await Curl.get(h.url(options: "info", source: "/a.png"))
        let fields = try #require(try JSONSerialization.jsonObject(with: info.body) as? [String: Any])
        #expect(info.headers["content-type"] == "application/json" && fields["width"] as? Int == 64 && fields["format"] as? String == "png")
        await h.finish()
    }

    @Test func healthMethodsAndTheResponseKey() async throws {
        let h = try await ServerHarness()
        h.origin.route("/a.png", .respond(body: Self.png))
        let health = try await Curl.get(URL(string: "http://127.0.0.1:\(h.port)/health")!)
        #expect(health.status == 200 && String(decoding: health.body, as: UTF8.self) == "ok")
        let url = h.url(options: "w:16", source: "/a.png")
        let post = try await Curl.get(url, method: "POST")
        #expect(post.status == 405 && post.headers["allow"] == "GET")
        #expect(h.origin.requestCount("/a.png") == 0, "a refused method reaches no origin")
        #expect(try await Curl.get(url).status == 200)
        // The warm key: the raw path, with the Accept choice only when the format is chosen from it.
        let order: [ImageFormat] = [.avif, .webp]
        #expect(ImageProcessor.responseKey(path: "/s/w:16/plain/x", accept: "image/webp", autoFormats: order) == "/s/w:16/plain/x")
        #expect(ImageProcessor.responseKey(path: "/s/f:auto/plain/x", accept: "image/webp,*/*", autoFormats: order) == "/s/f:auto/plain/x|webp")
        #expect(ImageProcessor.responseKey(path: "/s/f:auto/plain/x", accept: "image/avif,image/webp,*/*", autoFormats: order)
                == "/s/f:auto/plain/x|avif")
        #expect(ImageProcessor.responseKey(path: "/s/f:auto/plain/x", accept: "image/avif,image/webp", autoFormats: [.webp, .avif])
                == "/s/f:auto/plain/x|webp")
        #expect(ImageProcessor.responseKey(path: "/s/format:auto/plain/x", accept: nil, autoFormats: order) == "/s/format:auto/plain/x|source")
        #expect(ImageProcessor.contains("ab", "abc") == false && ImageProcessor.contains("xxabc", "abc") && !ImageProcessor.contains("xxab", "abc"))
        #expect(ImageProcessor.contains("é/f:auto", "f:auto") && ImageProcessor.contains("", ""))
        await h.finish()
    }

    @Test func refusalsAreA4xxWithAReasonAndNoOriginRequest() async throws {
        let inside = TestHTTPServer()
        try await inside.start(host: "127.0.0.2")
        inside.route("/secret.png", .respond(body: Self.png))
        let h = try await ServerHarness { $0.allowedSources = ["127.0.0.1"] }
        h.origin.route("/a.png", .respond(body: Self.png))
        h.origin.route("/redirect.png", .redirect(to: inside.url("/secret.png").absoluteString))
        func text(_ reply: Curl.Reply) -> String { String(decoding: reply.body, as: UTF8.self) }
        // A bad signature, and none.
        let good = h.url(options: "w:10", source: "/a.png").absoluteString
        let forged = try await Curl.get(URL(string: good.replacingOccurrences(of: "/w:10/", with: "/w:11/"))!)
        #expect(forged.status == 403 && text(forged).contains("signature"))
        // A result in the response cache is not served to another signature of its path.
        #expect(try await Curl.get(URL(string: good)!).status == 200)
        let signature = String(URL(string: good)!.path.split(separator: "/")[0])
        let resigned = good.replacingOccurrences(of: signature, with: String(signature.reversed()))
        let wrong = try await Curl.get(URL(string: resigned)!)
        #expect(wrong.status == 403 && text(wrong).contains("signature"))
        let unsigned = try await Curl.get(URL(string: "http://127.0.0.1:\(h.port)/_/w:10/plain/\(h.origin.url("/a.png"))")!)
        #expect(unsigned.status == 403)
        // A malformed request.
        let malformed = try await Curl.get(h.url("/w:100000/plain/" + h.origin.url("/a.png").absoluteString))
        #expect(malformed.status == 400 && text(malformed).contains("from 0 to 4096"))
        // A host outside the allowed sources; a name that resolves to loopback is one too.
        let named = try await Curl.get(h.url("/w:10/plain/http://localhost:\(h.origin.port)/a.png"))
        #expect(named.status == 403 && text(named).contains("allowed sources"))
        let file = try await Curl.get(h.url("/w:10/plain/file:///etc/passwd"))
        #expect(file.status == 403 && text(file).contains("http and https"))
        #expect(h.origin.requestCount("/a.png") == 1, "only the signed request reached the origin")
        // A redirect out of the allowed sources (to a private address besides): refused before
        // anything connects to it.
        let redirected = try await Curl.get(h.url(options: "w:10", source: "/redirect.png"))
        #expect(redirected.status == 403 && text(redirected).contains("redirects"))
        #expect(inside.connectionCount == 0)
        // The metadata address.
        let metadata = try await Curl.get(h.url("/w:10/plain/http://169.254.169.254/latest/meta-data"))
        #expect(metadata.status == 403)
        await h.finish()
        await inside.stop()
    }

    @Test func originFaultsAreClearStatusesAndTheServerGoesOn() async throws {
        let h = try await ServerHarness { $0.processingTimeoutSeconds = 1 }
        h.origin.route("/missing.png", .respond(status: 404, body: Data()))
        h.origin.route("/broken.png", .respond(status: 500, body: Data()))
        h.origin.route("/text.png", .respond(contentType: "text/plain", body: Data("hello".utf8)))
        h.origin.route("/stall.png", .stallAfter(bytes: 100, body: Self.png))
        h.origin.route("/reset.png", .resetAfter(bytes: 100, body: Self.png))
        h.origin.route("/a.png", .respond(body: Self.png))
        for (path, status) in [("/missing.png", 404), ("/broken.png", 502), ("/text.png", 422), ("/stall.png", 504), ("/reset.png", 502)] {
            let reply = try await Curl.get(h.url(options: "w:10", source: path))
            #expect(reply.status == status, "\(path): \(String(decoding: reply.body, as: UTF8.self))")
            #expect(reply.headers["cache-control"] == "no-store")
        }
        #expect(try await Curl.get(h.url(options: "w:10", source: "/a.png")).status == 200)
        #expect(try await Curl.get(URL(string: "http://127.0.0.1:\(h.port)/health")!).body == Data("ok".utf8))
        await h.finish()
    }

    @Test func aThousandRequestsForOneNewSourceMakeOneOriginRequest() async throws {
        let h = try await ServerHarness()
        h.origin.route("/a.png", .delayed(.milliseconds(300), .respond(body: Self.png)))
        var client = HTTPImageLoader.Configuration()
        client.maximumConcurrentDownloads = 64
        let loader = HTTPImageLoader(configuration: client)
        let urls = (0..<1000).map { h.url(options: "w:\($0 % 200 + 1)", source: "/a.png") }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for url in urls { group.addTask { try await loader.data(for: ImageLoaderRequest(url: url)).1.statusCode } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 1000 && statuses.allSatisfy { $0 == 200 })
        #expect(h.origin.requestCount("/a.png") == 1)
        await h.finish()
    }

    @Test func aFullQueueAnswers503AndTheServerKeepsServing() async throws {
        let h = try await ServerHarness { $0.maximumPendingRequests = 2 }
        h.origin.route("/slow.png", .delayed(.milliseconds(600), .respond(body: Self.png)))
        h.origin.route("/a.png", .respond(body: Self.png))
        var client = HTTPImageLoader.Configuration()
        client.maximumConcurrentDownloads = 16
        client.acceptableStatusCodes = Set(200..<600)
        let loader = HTTPImageLoader(configuration: client)
        let replies = try await withThrowingTaskGroup(of: ImageLoaderResponse.self) { group in
            for index in 0..<10 {
                let url = h.url(options: "w:\(index + 1)", source: "/slow.png")
                group.addTask { try await loader.data(for: ImageLoaderRequest(url: url)).1 }
            }
            return try await group.reduce(into: [ImageLoaderResponse]()) { $0.append($1) }
        }
        let busy = replies.filter { $0.statusCode == 503 }
        #expect(replies.filter { $0.statusCode == 200 }.count >= 2 && !busy.isEmpty)
        #expect(busy.allSatisfy { $0.headers["retry-after"] == "1" })
        #expect(replies.allSatisfy { $0.statusCode == 200 || $0.statusCode == 503 }, "nothing else")
        #expect(try await Curl.get(h.url(options: "w:10", source: "/a.png")).status == 200, "still serving")
        await h.finish()
    }

    @Test func localFilesAreServedOnlyFromTheirRoot() async throws {
        let files = TemporaryDirectory("serve-files")
        defer { files.remove() }
        let root = files.url.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("dir"), withIntermediateDirectories: true)
        try Self.png.write(to: root.appendingPathComponent("dir/a.png"))
        try Self.png.write(to: files.url.appendingPathComponent("outside.png"))
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("link.png"), withDestinationURL: files.url.appendingPathComponent("outside.png"))
        let h = try await ServerHarness { $0.fileRoot = root.path }
        func get(_ path: String) async throws -> Curl.Reply { try await Curl.get(h.url("/w:10/plain/local://" + path)) }
        #expect(try await get("/dir/a.png").status == 200)
        for escape in ["/../outside.png", "/dir/../../outside.png", "/link.png", "/%2E%2E/outside.png"] {
            let reply = try await get(escape)
            #expect(reply.status == 403 && String(decoding: reply.body, as: UTF8.self).contains("leaves the file root"), "\(escape): \(reply.status)")
        }
        #expect(try await get("/missing.png").status == 404)
        await h.finish()
        let closed = try await ServerHarness()
        let refused = try await Curl.get(closed.url("/w:10/plain/local:///dir/a.png"))
        #expect(refused.status == 403 && String(decoding: refused.body, as: UTF8.self).contains("no fileRoot"))
        await closed.finish()
    }

    @Test func aSourceOverTheByteLimitIsRefused() async throws {
        let h = try await ServerHarness { $0.maximumSourceBytes = 100 }
        h.origin.route("/a.png", .respond(body: Self.png))
        let reply = try await Curl.get(h.url(options: "w:10", source: "/a.png"))
        #expect(reply.status == 422 && String(decoding: reply.body, as: UTF8.self).contains("larger than 100 bytes"))
        await h.finish()
    }

    @Test func anAnimationOverTheFrameLimitIsRefused() async throws {
        let gif = try Corpus.data("gif/chi.gif")
        let frames = try Image(data: gif).frameCount
        let h = try await ServerHarness { $0.maximumFrames = frames - 1 }
        h.origin.route("/a.gif", .respond(contentType: "image/gif", body: gif))
        // Refused before the resize touches a frame, and without any operation too.
        for options in ["rs:fit:10:10", "q:50"] {
            let reply = try await Curl.get(h.url(options: options, source: "/a.gif"))
            #expect(reply.status == 422 && String(decoding: reply.body, as: UTF8.self).contains("\(frames) frames, more than \(frames - 1)"), "\(options)")
        }
        // The first frame only is a still image: served.
        let still = try await Curl.get(h.url(options: "rs:fit:10:10/ff", source: "/a.gif"))
        #expect(try still.status == 200 && !Image(data: still.body).isAnimated)
        await h.finish()
    }

    /// Two servers (two machines) over one memcached tier: the second serves a source the first
    /// fetched without asking the origin.
    @Test func twoServersShareTheTier() async throws {
        let nodes = try MemcachedNodes(count: 1)
        defer { nodes.stop() }
        let tier = "memcached://127.0.0.1:\(nodes.ports[0])"
        let first = try await ServerHarness { $0.sharedCache = tier }
        first.origin.route("/a.png", .respond(body: Self.png))
        let second = try await ServerHarness { $0.sharedCache = tier }
        #expect(try await Curl.get(first.url(options: "w:10", source: "/a.png")).status == 200)
        await first.server.manager.waitForPendingStores()
        // The second server's origin is the same URL (the first server's origin).
        let path = "/w:12/plain/" + first.origin.url("/a.png").absoluteString
        #expect(try await Curl.get(second.url(path)).status == 200)
        #expect(first.origin.requestCount("/a.png") == 1, "the second server found the source in the tier")
        await first.finish()
        await second.finish()
    }
}

import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// `webimage serve` is a shared cache by RFC 9111: stale sources are revalidated with their
/// validators and a 304 keeps every result made from them (no render), `private` and `Vary: *`
/// sources are kept nowhere, `s-maxage` counts, `info` lives no longer than its source, and
/// `Accept` is read with its q-values.
@Suite(.serialized) struct ServerSharedCacheTests {
    static let png = ManagerHarness.png
    static let other = try! Image(bitmap: Fixtures.gradient(width: 20, height: 10)).encoded(as: .png)

    static func sent(_ h: ServerHarness, _ path: String) -> [String: String] {
        Dictionary(h.origin.headers(of: path).map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { a, _ in a })
    }

    static func renders(_ h: ServerHarness) throws -> Int {
        h.server.processor.renders.load(ordering: .relaxed)
    }

    @Test func aStaleSourceIsRevalidatedAndA304KeepsItsResultsWithoutRendering() async throws {
        let h = try await ServerHarness()
        h.origin.route("/r.png", .headers([("cache-control", "max-age=2")], then: .etag("\"r1\"", body: Self.png)))
        let sizes = ["rs:fit:32:32", "rs:fit:16:16/f:webp"]
        var first: [String: Curl.Reply] = [:]
        for options in sizes { first[options] = try await Curl.get(h.url(options: options, source: "/r.png")) }
        #expect(try Self.renders(h) == 2 && h.origin.requestCount("/r.png") == 1)
        try await Task.sleep(for: .milliseconds(2200))
        for options in sizes {
            let again = try await Curl.get(h.url(options: options, source: "/r.png"))
            #expect(again.status == 200 && again.body == first[options]?.body && again.headers["etag"] == first[options]?.headers["etag"])
            #expect(again.headers["cache-control"] == "public, max-age=2" || again.headers["cache-control"] == "public, max-age=1")
        }
        #expect(h.origin.requestCount("/r.png") == 2, "one conditional request for both results")
        #expect(Self.sent(h, "/r.png")["if-none-match"] == "\"r1\"")
        #expect(try Self.renders(h) == 2, "the 304 kept both results: nothing rendered again")
        await h.finish()
    }

    @Test func aChangedSourceIsRenderedAgain() async throws {
        let h = try await ServerHarness()
        h.origin.route("/c.png", .sequence([.headers([("cache-control", "max-age=2")], then: .etag("\"c1\"", body: Self.png)),
                                            .headers([("cache-control", "max-age=60")], then: .etag("\"c2\"", body: Self.other))]))
        let before = try await Curl.get(h.url(options: "rs:fit:64:64", source: "/c.png"))
        try await Task.sleep(for: .milliseconds(2200))
        let after = try await Curl.get(h.url(options: "rs:fit:64:64", source: "/c.png"))
        #expect(before.body != after.body)
        #expect(try ImageCoders.shared.decode(after.body).width == 20)
        #expect(try Self.renders(h) == 2)
        await h.finish()
    }

    @Test func everyKindOfStaleSourceIsAskedConditionally() async throws {
        let h = try await ServerHarness()
        h.origin.route("/modified.png", .headers([("cache-control", "max-age=2"), ("last-modified", "Mon, 02 Nov 2026 10:00:00 GMT")],
                                                 then: .respond(body: Self.png)))
        h.origin.route("/nocache.png", .headers([("cache-control", "no-cache")], then: .etag("\"n\"", body: Self.png)))
        h.origin.route("/aged.png", .headers([("cache-control", "max-age=60"), ("age", "100")], then: .etag("\"a\"", body: Self.png)))
        for path in ["/modified.png", "/nocache.png", "/aged.png"] {
            _ = try await Curl.get(h.url(options: "rs:fit:32:32", source: path))
        }
        try await Task.sleep(for: .milliseconds(2200))
        await h.server.manager.waitForPendingStores()
        for path in ["/modified.png", "/nocache.png", "/aged.png"] {
            #expect(try await Curl.get(h.url(options: "rs:fit:24:24", source: path)).status == 200)
            #expect(h.origin.requestCount(path) == 2, "\(path)")
            let sent = Self.sent(h, path)
            #expect(sent["if-none-match"] != nil || sent["if-modified-since"] == "Mon, 02 Nov 2026 10:00:00 GMT", "\(path): \(sent)")
        }
        await h.finish()
    }

    @Test func privateAndVaryStarSourcesAreProcessedButKeptNowhere() async throws {
        let h = try await ServerHarness()
        h.origin.route("/private.png", .headers([("cache-control", "private, max-age=600")], then: .respond(body: Self.png)))
        h.origin.route("/star.png", .headers([("cache-control", "max-age=600"), ("vary", "*")], then: .respond(body: Self.png)))
        for _ in 0..<2 {
            let mine = try await Curl.get(h.url(options: "rs:fit:32:32", source: "/private.png"))
            #expect(mine.status == 200 && mine.headers["cache-control"]?.hasPrefix("private, max-age=") == true, "\(mine.headers)")
            let star = try await Curl.get(h.url(options: "rs:fit:32:32", source: "/star.png"))
            #expect(star.status == 200 && star.headers["cache-control"] == "no-store")
        }
        #expect(h.origin.requestCount("/private.png") == 2 && h.origin.requestCount("/star.png") == 2)
        await h.server.manager.waitForPendingStores()
        let cache = try #require(h.server.manager.cache as? ImageCache)
        #expect(await cache.containsImage(forKey: h.origin.url("/private.png").absoluteString, in: .all) == ImageCacheType.none)
        await h.finish()
    }

    @Test func sMaxAgeIsTheSourcesLifetimeHere() async throws {
        let h = try await ServerHarness()
        h.origin.route("/s.png", .headers([("cache-control", "max-age=600, s-maxage=2")], then: .etag("\"s\"", body: Self.png)))
        let first = try await Curl.get(h.url(options: "rs:fit:32:32", source: "/s.png"))
        #expect(first.headers["cache-control"] == "public, max-age=2" || first.headers["cache-control"] == "public, max-age=1")
        try await Task.sleep(for: .milliseconds(2200))
        _ = try await Curl.get(h.url(options: "rs:fit:32:32", source: "/s.png"))
        #expect(h.origin.requestCount("/s.png") == 2 && Self.sent(h, "/s.png")["if-none-match"] == "\"s\"")
        await h.finish()
    }

    @Test func infoLivesNoLongerThanItsSource() async throws {
        let h = try await ServerHarness()
        h.origin.route("/i.png", .sequence([.headers([("cache-control", "max-age=2")], then: .etag("\"i1\"", body: Self.png)),
                                            .headers([("cache-control", "max-age=60")], then: .etag("\"i2\"", body: Self.other))]))
        let first = try await Curl.get(h.url(options: "info", source: "/i.png"))
        #expect(first.headers["cache-control"] == "public, max-age=2" || first.headers["cache-control"] == "public, max-age=1")
        #expect(String(decoding: first.body, as: UTF8.self).contains("\"width\":64"))
        try await Task.sleep(for: .milliseconds(2200))
        let changed = try await Curl.get(h.url(options: "info", source: "/i.png"))
        #expect(String(decoding: changed.body, as: UTF8.self).contains("\"width\":20"), "\(String(decoding: changed.body, as: UTF8.self))")
        await h.finish()
    }

    @Test func acceptIsReadWithItsWeights() async throws {
        let order: [ImageFormat] = [.avif, .webp]
        let cases: [(String, ImageFormat?)] = [
            ("image/avif;q=0, image/webp", .webp), ("image/avif;q=0.5,image/webp;q=0.9", .webp), ("image/avif,image/webp", .avif),
            ("image/webp;q=0", nil), ("image/*,*/*;q=0.8", nil), ("IMAGE/AVIF", .avif), ("image/avif;q=abc, image/webp;q=0.1", .webp),
            ("image/avif ; q=1.0", .avif), ("image/avif;q=1.5", nil), ("text/html, image/webp;level=1;q=0.2", .webp), ("", nil),
        ]
        for (accept, expected) in cases {
            #expect(ImageProcessor.autoFormat(accept: accept, order: order) == expected, "\(accept)")
        }
        let h = try await ServerHarness { $0.autoFormats = ["webp", "png"] }
        h.origin.route("/a.png", .respond(body: Self.png))
        let refused = try await Curl.get(h.url(options: "f:auto", source: "/a.png"), headers: ["Accept": "image/webp;q=0, image/png"])
        #expect(refused.headers["content-type"] == "image/png" && refused.headers["vary"] == "Accept")
        await h.finish()
    }
}

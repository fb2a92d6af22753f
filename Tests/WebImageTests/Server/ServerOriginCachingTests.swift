import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// `webimage serve` follows its origin's caching headers by default and passes them on, capped.
@Suite(.serialized) struct ServerOriginCachingTests {
    static let png = ManagerHarness.png

    static func maxAge(_ reply: Curl.Reply) -> Int? {
        guard let value = reply.headers["cache-control"], value.hasPrefix("public, max-age=") else { return nil }
        return Int(value.dropFirst("public, max-age=".count))
    }

    @Test func theOriginsFreshnessCapsWhatIsPassedOn() async throws {
        let h = try await ServerHarness()
        h.origin.route("/short.png", .headers([("cache-control", "max-age=60")], then: .respond(body: Self.png)))
        h.origin.route("/plain.png", .respond(body: Self.png))
        let first = try await Curl.get(h.url(options: "rs:fit:32:32", source: "/short.png"))
        #expect(first.status == 200)
        let age = try #require(Self.maxAge(first), "\(first.headers)")
        #expect((55...60).contains(age), "capped at the origin's 60 s: \(age)")
        // A warm answer (the response cache) keeps the cap.
        let warm = try await Curl.get(h.url(options: "rs:fit:32:32", source: "/short.png"))
        #expect(Self.maxAge(warm).map { $0 <= 60 } == true)
        #expect(Self.maxAge(try await Curl.get(h.url(options: "rs:fit:32:32", source: "/plain.png"))) == 31_536_000, "the origin said nothing")
        // Another result of the same decoded source, made from memory (no request, no disk read),
        // keeps the source's cap.
        let fromMemory = try await Curl.get(h.url(options: "rs:fit:32:32/f:webp", source: "/short.png"))
        #expect(fromMemory.status == 200 && fromMemory.headers["content-type"] == "image/webp")
        #expect(Self.maxAge(fromMemory).map { $0 <= 60 } == true, "\(fromMemory.headers)")
        #expect(h.origin.requestCount("/short.png") == 1)
        await h.finish()
    }

    @Test func noStoreSourcesAreKeptNowhereAndSaidSo() async throws {
        let h = try await ServerHarness()
        h.origin.route("/private.png", .headers([("cache-control", "no-store")], then: .respond(body: Self.png)))
        h.origin.route("/check.png", .headers([("cache-control", "no-cache")], then: .etag("\"c\"", body: Self.png)))
        for _ in 0..<2 {
            let reply = try await Curl.get(h.url(options: "rs:fit:32:32", source: "/private.png"))
            #expect(reply.status == 200 && reply.headers["cache-control"] == "no-store")
            let checked = try await Curl.get(h.url(options: "rs:fit:32:32", source: "/check.png"))
            #expect(checked.status == 200 && checked.headers["cache-control"] == "no-cache")
        }
        #expect(h.origin.requestCount("/private.png") == 2, "kept in no cache: fetched each time")
        #expect(h.origin.requestCount("/check.png") == 2, "revalidated each time")
        await h.server.manager.waitForPendingStores()
        let cache = try #require(h.server.manager.cache as? ImageCache)
        #expect(await cache.containsImage(forKey: h.origin.url("/private.png").absoluteString, in: .all) == ImageCacheType.none)
        await h.finish()
    }

    @Test func ignoreKeepsTheConfiguredMaxAge() async throws {
        let h = try await ServerHarness { $0.cachePolicy = .ignoreHeaders }
        h.origin.route("/private.png", .headers([("cache-control", "no-store")], then: .respond(body: Self.png)))
        let reply = try await Curl.get(h.url(options: "rs:fit:32:32", source: "/private.png"))
        #expect(reply.headers["cache-control"] == "public, max-age=31536000")
        _ = try await Curl.get(h.url(options: "rs:fit:32:32", source: "/private.png"))
        #expect(h.origin.requestCount("/private.png") == 1)
        #expect(try ServerConfiguration.decode(Data(#"{"cachePolicy": "ignore"}"#.utf8)).cachePolicy == .ignoreHeaders)
        #expect(throws: (any Error).self) { try ServerConfiguration.decode(Data(#"{"cachePolicy": "sometimes"}"#.utf8)) }
        await h.finish()
    }
}

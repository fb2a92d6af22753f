import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// `webimage serve` converts sources with another colour profile to sRGB by default, keeps them
/// with `cs:original` (embedding the profile), and follows a `colorSpace` configuration.
@Suite(.serialized) struct ServeColorTests {
    @Test func resultsAreSRGBByDefaultAndKeepTheProfileWithCSOriginal() async throws {
        let server = try await ServerHarness()
        server.origin.route("/p3.jpg", .respond(body: try ModernCorpus.data("icc/jpeg_displayp3.jpg")))
        let converted = try await Curl.get(server.url(options: "f:png", source: "/p3.jpg"))
        let kept = try await Curl.get(server.url(options: "cs:original/f:png", source: "/p3.jpg"))
        #expect(converted.status == 200 && kept.status == 200)
        let srgb = try ImageCoders.shared.decode(converted.body, options: .init(colorSpace: .original))
        let original = try ImageCoders.shared.decode(kept.body, options: .init(colorSpace: .original))
        #expect(srgb.colorInfo.iccProfile == nil)
        #expect(original.colorInfo.profileDescription?.hasPrefix("Display P3") == true)
        // The converted result is the sRGB rendering; the kept one shows the same once managed.
        let reference = try ImageCoders.shared.decode(try ModernCorpus.data("reference/icc/jpeg_displayp3.jpg.srgb.png")).bitmap
        #expect(try #require(PixelDistance(srgb.bitmap, reference)).meanAbs <= 1)
        #expect(try #require(PixelDistance(try ImageCoders.shared.decode(kept.body).bitmap, reference)).meanAbs <= 1)
        let refused = try await Curl.get(server.url(options: "cs:p3/f:png", source: "/p3.jpg"))
        #expect(refused.status == 400)
        await server.finish()
    }

    @Test func theConfigurationCanKeepTheOriginal() async throws {
        let server = try await ServerHarness { $0.colorSpace = .original }
        server.origin.route("/p3.png", .respond(body: try ModernCorpus.data("icc/png_displayp3.png")))
        let reply = try await Curl.get(server.url(options: "w:24/f:png", source: "/p3.png"))
        let image = try ImageCoders.shared.decode(reply.body, options: .init(colorSpace: .original))
        #expect(reply.status == 200 && image.width == 24 && image.colorInfo.iccProfile != nil)
        let config = try ServerConfiguration.decode(Data(#"{"colorSpace": "sRGB"}"#.utf8))
        #expect(config.colorSpace == .sRGB)
        #expect(throws: ServerConfigurationError.self) { try ServerConfiguration.decode(Data(#"{"colorSpace": "p3"}"#.utf8)) }
        await server.finish()
    }
}

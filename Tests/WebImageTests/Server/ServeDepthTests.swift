import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer
import WebImageAVIF

/// `depth:source` keeps a deep source's depth when only the format changes; HDR sources are
/// tone-mapped to sRGB like every other colour space.
@Suite(.serialized) struct ServeDepthTests {
    static func registerAVIF() {
        if !ImageCoders.shared.all.contains(where: { $0 is AVIFCoder }) { AVIFCoder.register() }
    }

    @Test func depthSourceKeepsSixteenBitsThroughAFormatChange() async throws {
        Self.registerAVIF()
        let server = try await ServerHarness()
        let png = try Data(contentsOf: Corpus.directory.appendingPathComponent("png/basn2c16.png"))
        server.origin.route("/deep.png", .respond(contentType: "image/png", body: png))
        let deep = try await Curl.get(server.url(options: "depth:source/f:png", source: "/deep.png"))
        #expect(deep.status == 200 && deep.body[24] == 16)
        let source = try ImageCoders.shared.decode(png, options: .sourceDepth)
        #expect(try ImageCoders.shared.decode(deep.body, options: .sourceDepth).bitmap == source.bitmap)
        let avif = try await Curl.get(server.url(options: "depth:source/f:avif", source: "/deep.png"))
        #expect(avif.status == 200)
        let decoded = try ImageCoders.shared.decode(avif.body, options: .sourceDepth)
        #expect(decoded.bitmap.pixelFormat == .rgba16)
        // By default, 8 bits (f:png alone would be the source's own bytes: nothing changes).
        let plain = try await Curl.get(server.url(options: "f:avif", source: "/deep.png"))
        #expect(plain.status == 200)
        #expect(try ImageCoders.shared.decode(plain.body, options: .sourceDepth).bitmap.pixelFormat == .rgba8)
        let bad = try await Curl.get(server.url(options: "depth:12/f:png", source: "/deep.png"))
        #expect(bad.status == 400 && String(decoding: bad.body, as: UTF8.self).contains("depth"))
        await server.finish()
    }

    @Test func anHDRSourceIsToneMapped() async throws {
        let server = try await ServerHarness()
        let png = try ImageCoders.shared.encode(HDRFormatsTests.hdrImage(), as: .png)
        server.origin.route("/hdr.png", .respond(contentType: "image/png", body: png))
        // Even a request that changes nothing: the source's HDR bytes are not sRGB.
        for options in ["f:png", "sm:false"] {
            let reply = try await Curl.get(server.url(options: options, source: "/hdr.png"))
            #expect(reply.status == 200 && reply.body[24] == 8 && reply.body.range(of: Data("cICP".utf8)) == nil, "\(options)")
            let mapped = try ImageCoders.shared.decode(png)
            #expect(try ImageCoders.shared.decode(reply.body).bitmap == mapped.bitmap)
        }
        await server.finish()
    }
}

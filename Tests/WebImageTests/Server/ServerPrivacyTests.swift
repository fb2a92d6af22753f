import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// Nothing private leaves `webimage serve` unless asked: the unchanged path as well as every
/// result loses EXIF (GPS), XMP, IPTC and comments, and the source's bytes go out only when
/// they are what the request asks for (upright, in the asked colour space).
@Suite(.serialized) struct ServerPrivacyTests {
    typealias F = MetadataFixtures

    static func expectPrivate(_ reply: Curl.Reply, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == 200, "\(what): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))", sourceLocation: sourceLocation)
        for marker in [F.secret, "SECRET-XMP", "Photoshop", "TRAILER"] {
            #expect(!F.contains(reply.body, marker), "\(what) leaks \(marker)", sourceLocation: sourceLocation)
        }
    }

    @Test func theUnchangedPathLosesEverythingButTheCopyright() async throws {
        let h = try await ServerHarness()
        let jpeg = try F.jpeg()
        let sources = ["/photo.jpg": jpeg, "/photo.png": try F.png(), "/photo.webp": try F.webp(), "/photo.gif": try F.gif()]
        for (name, body) in sources { h.origin.route(name, .respond(body: body)) }
        for (name, source) in sources.sorted(by: { $0.key < $1.key }) {
            let reply = try await Curl.get(h.url("/plain/" + h.origin.url(name).absoluteString))
            Self.expectPrivate(reply, name)
            if name != "/photo.gif" { #expect(F.contains(reply.body, F.copyright), "\(name) keeps its copyright (keep_copyright)") }
            let pixels = try ImageCoders.shared.decode(reply.body).bitmap
            #expect(pixels == (try ImageCoders.shared.decode(source).bitmap), "\(name): the same image")
        }
        // The flag imgproxy users write, and kcr:0.
        let stripped = try await Curl.get(h.url(options: "strip/kcr:0", source: "/photo.jpg"))
        Self.expectPrivate(stripped, "strip/kcr:0")
        #expect(!F.contains(stripped.body, F.copyright) && !F.contains(stripped.body, "Exif"))
        // sm:0 asks for the source as it is (its bytes read from the disk cache under a memory hit).
        await h.server.manager.waitForPendingStores()
        let kept = try await Curl.get(h.url(options: "sm:0", source: "/photo.jpg"))
        #expect(kept.body == jpeg)
        #expect(try await Curl.get(h.url(options: "sm:maybe", source: "/photo.jpg")).status == 400)
        await h.finish()
    }

    @Test func resizedAndConvertedResultsCarryNoMetadata() async throws {
        let h = try await ServerHarness()
        h.origin.route("/photo.jpg", .respond(body: try F.jpeg(width: 80, height: 48)))
        for options in ["rs:fit:32:32", "f:png", "f:webp", "q:50", "rs:fill:20:20/sm:0"] {
            let reply = try await Curl.get(h.url(options: options, source: "/photo.jpg"))
            Self.expectPrivate(reply, options)
            #expect(!F.contains(reply.body, "Exif"), "\(options): no EXIF block at all")
        }
        await h.finish()
    }

    @Test func anOrientedSourceIsTurnedNotPassedOnWithoutItsOrientation() async throws {
        let h = try await ServerHarness()
        // Orientation 6: stored 40x24, shown 24x40.
        h.origin.route("/turned.jpg", .respond(body: try F.jpeg(orientation: 6)))
        let reply = try await Curl.get(h.url(options: "kcr:0", source: "/turned.jpg"))
        Self.expectPrivate(reply, "orientation 6")
        let image = try ImageCoders.shared.decode(reply.body)
        #expect(image.width == 24 && image.height == 40)
        #expect(image.exifOrientation == nil || image.exifOrientation == 1)
        await h.finish()
    }

    @Test func theServersColourSpaceHoldsOnTheUnchangedPath() async throws {
        let h = try await ServerHarness()
        let p3 = try ModernCorpus.data("icc/jpeg_displayp3.jpg")
        h.origin.route("/p3.jpg", .respond(body: p3))
        let converted = try await Curl.get(h.url("/plain/" + h.origin.url("/p3.jpg").absoluteString))
        #expect(converted.status == 200 && converted.body != p3)
        let convertedInfo = ImageMetadata.colorInfo(of: converted.body, format: .jpeg)
        #expect(convertedInfo.profileDescription?.hasPrefix("Display P3") != true, "converted to sRGB")
        let kept = try await Curl.get(h.url(options: "cs:original", source: "/p3.jpg"))
        #expect(ImageMetadata.colorInfo(of: kept.body, format: .jpeg) == ImageMetadata.colorInfo(of: p3, format: .jpeg))
        await h.finish()
    }

    @Test func theConfigurationMayKeepMetadata() async throws {
        let h = try await ServerHarness { $0.stripMetadata = false }
        let jpeg = try F.jpeg()
        h.origin.route("/photo.jpg", .respond(body: jpeg))
        #expect(try await Curl.get(h.url("/plain/" + h.origin.url("/photo.jpg").absoluteString)).body == jpeg)
        Self.expectPrivate(try await Curl.get(h.url(options: "sm:1/kcr:0", source: "/photo.jpg")), "sm:1")
        #expect(try ServerConfiguration.decode(Data(#"{"stripMetadata": false, "keepCopyright": false}"#.utf8)).keepCopyright == false)
        await h.finish()
    }
}

import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer
import WebImagePDF

/// `webimage serve` refuses PDF sources unless its configuration turns them on, and then draws
/// them in its decoding workers: the first page, or `pg:N`.
@Suite(.serialized) struct ServePDFTests {
    /// Two pages: shapes without text (a worker cannot open the system's fonts for text in a font
    /// the document does not embed, see DocC "Formats"), and a blue one.
    static let pdf = PDFFixtures.document([.init(width: 200, height: 150, content: PDFFixtures.shapesWithoutText),
                                           .init(width: 120, height: 60, content: "0 0 1 rg 0 0 120 60 re f")])

    static func registerPDF() {
        if !ImageCoders.shared.all.contains(where: { $0 is PDFCoder }) { PDFCoder.register() }
    }

    @Test func aPDFSourceIsRefusedByDefault() async throws {
        Self.registerPDF()
        let server = try await ServerHarness()
        server.origin.route("/doc.pdf", .respond(contentType: "application/pdf", body: Self.pdf))
        let reply = try await Curl.get(server.url(options: "w:64/f:png", source: "/doc.pdf"))
        #expect(reply.status == 422 && String(decoding: reply.body, as: UTF8.self).contains("not an image the server decodes"))
        await server.finish()
    }

    @Test func turnedOnItDrawsThePageAskedForInAWorker() async throws {
        Self.registerPDF()
        let server = try await ServerHarness { $0.pdf = true }
        server.origin.route("/doc.pdf", .respond(contentType: "application/pdf", body: Self.pdf))
        let first = try await Curl.get(server.url(options: "w:400/f:png", source: "/doc.pdf"))
        #expect(first.status == 200)
        let image = try ImageCoders.shared.decode(first.body)
        #expect(image.width == 400 && image.height == 300)
        // As this process draws it.
        let here = try PDFCoderTests.coders.decode(Self.pdf, options: ImageDecodingOptions(maxPixelSize: 400))
        let distance = try #require(PixelDistance(image.bitmap, here.bitmap))
        #expect(distance.meanAbs < 0.5, "mean \(distance.meanAbs)")
        let second = try await Curl.get(server.url(options: "pg:1/f:png", source: "/doc.pdf"))
        let page = try ImageCoders.shared.decode(second.body)
        #expect(second.status == 200 && page.width == 120 && page.height == 60)
        #expect(Array(page.bitmap.rgba.prefix(4)) == [0, 0, 255, 255])
        let bad = try await Curl.get(server.url(options: "pg:x/f:png", source: "/doc.pdf"))
        #expect(bad.status == 400 && String(decoding: bad.body, as: UTF8.self).contains("page"))
        let missing = try await Curl.get(server.url(options: "pg:7/f:png", source: "/doc.pdf"))
        #expect(missing.status == 422)
        await server.finish()
    }
}

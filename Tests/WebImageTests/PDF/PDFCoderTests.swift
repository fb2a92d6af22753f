import Foundation
import Testing
@testable import WebImage
import WebImagePDF

/// PDF pages through poppler (WebImagePDF), against `pdftoppm` (poppler-utils, installed by
/// scripts/install-deps.sh) drawing the same page at the same size.
@Suite struct PDFCoderTests {
    static let coders = ImageCoders([PDFCoder()] + ImageCoders.builtIn)

    /// `pdftoppm` drawing `page` (from 0) of `pdf` into `width` x `height` pixels.
    static func pdftoppm(_ pdf: Data, page: Int = 0, width: Int, height: Int) throws -> Bitmap {
        try ReferenceTools.png("/usr/bin/pdftoppm", input: pdf, suffix: "pdf", outputName: "out.png") { input, output in
            ["-png", "-singlefile", "-f", "\(page + 1)", "-l", "\(page + 1)", "-scale-to-x", "\(width)", "-scale-to-y", "\(height)",
             input, String(output.dropLast(4))]
        }.converted(to: .rgba8)
    }

    /// At sizes where the page's edges fall on whole pixels: elsewhere cairo anti-aliases an
    /// edge that pdftoppm's own rasteriser (Splash) snaps to the pixel grid, half a pixel of
    /// difference along every edge (pdftocairo, on cairo, draws as this coder does).
    @Test(arguments: [nil, 400, 300] as [Int?]) func aPageLooksAsPdftoppmDrawsIt(_ size: Int?) throws {
        let pdf = PDFFixtures.document([.init(width: 200, height: 150, content: PDFFixtures.shapes)])
        let image = try Self.coders.decode(pdf, options: ImageDecodingOptions(maxPixelSize: size))
        #expect(image.format == .pdf)
        // One pixel a point, or the longer side filling the size asked for (enlarged too).
        let expected = size.map { ($0, Int((150.0 * Double($0) / 200).rounded(.up))) } ?? (200, 150)
        #expect(image.width == expected.0 && image.height == expected.1)
        let reference = try Self.pdftoppm(pdf, width: image.width, height: image.height)
        let distance = try #require(PixelDistance(image.bitmap, reference))
        #expect(distance.meanAbs <= 2, "mean \(distance.meanAbs), max \(distance.maxAbs)")
        // The page is drawn at all: red, blue and the paper are where they should be.
        let blank = Bitmap(width: image.width, height: image.height, rgba: [UInt8](repeating: 255, count: image.width * image.height * 4))
        #expect(try #require(PixelDistance(image.bitmap, blank)).meanAbs > 20)
    }

    @Test func aPageChosenByIndexAndAPagePastTheLast() throws {
        let pdf = PDFFixtures.document([.init(width: 100, height: 100, content: "1 0 0 rg 0 0 100 100 re f"),
                                        .init(width: 120, height: 60, content: "0 0 1 rg 0 0 120 60 re f")])
        var options = ImageDecodingOptions()
        options.pageIndex = 1
        let second = try Self.coders.decode(pdf, options: options)
        #expect(second.width == 120 && second.height == 60)
        #expect(Array(second.bitmap.rgba.prefix(4)) == [0, 0, 255, 255])
        let first = try Self.coders.decode(pdf)
        #expect(Array(first.bitmap.rgba.prefix(4)) == [255, 0, 0, 255])
        options.pageIndex = 2
        #expect(throws: ImageError.self) { try Self.coders.decode(pdf, options: options) }
    }

    /// A page box of 200,000 inches is refused before anything is drawn; asked at a size,
    /// it is drawn at that size.
    @Test func aHugePageIsCheckedBeforeDrawing() throws {
        let pdf = PDFFixtures.document([.init(width: 14_400_000, height: 14_400_000, content: PDFFixtures.shapes)])
        #expect {
            try Self.coders.decode(pdf)
        } throws: { error in
            if case .tooLarge = error as? ImageError { return true }
            return false
        }
        let small = try Self.coders.decode(pdf, options: ImageDecodingOptions(maxPixelSize: 64))
        #expect(small.width == 64 && small.height == 64)
    }

    /// Arrays nested 200,000 deep in the page's dictionary: poppler's parser stops at its depth
    /// limit; the page is drawn or refused, in bounded time, without a crash.
    @Test func deepNestingIsBounded() throws {
        let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        let pdf = PDFFixtures.document([.init(width: 100, height: 100, content: "0 0 1 rg 0 0 50 50 re f", extra: "/Deep \(deep)")])
        let clock = ContinuousClock()
        let elapsed = clock.measure { _ = try? Self.coders.decode(pdf) }
        #expect(elapsed < .seconds(10))
        // A content stream nested as deep (q without Q) is drawn too.
        let nested = String(repeating: "q ", count: 100_000) + "1 0 0 rg 0 0 10 10 re f"
        #expect(throws: Never.self) { _ = try? Self.coders.decode(PDFFixtures.document([.init(width: 50, height: 50, content: nested)])) }
    }

    /// JavaScript, a URI link, a launch action and a remote go-to: none is run or followed. The
    /// link's address is a local server that counts requests: it gets none.
    @Test func scriptsAndLinksAreNeitherRunNorFollowed() async throws {
        let server = TestHTTPServer()
        try await server.start()
        let url = server.url("/pdf-link").absoluteString
        let objects = [
            "<< /S /JavaScript /JS (app.launchURL\\(\"\(url)\"\\);) >>",
            "<< /Type /Annot /Subtype /Link /Border [0 0 0] /Rect [0 0 100 100] /A << /S /URI /URI (\(url)) >> >>",
            "<< /Type /Annot /Subtype /Link /Border [0 0 0] /Rect [0 0 50 50] /A << /S /Launch /F (/bin/sh) >> >>",
            "<< /Type /Annot /Subtype /Link /Border [0 0 0] /Rect [50 50 100 100] /A << /S /GoToR /F (\(url)) /D [0 /Fit] >> >>",
        ]
        let first = PDFFixtures.firstExtraObject(pages: 1)
        let pdf = PDFFixtures.document([.init(width: 100, height: 100, content: "0 1 0 rg 0 0 100 100 re f",
                                              extra: "/Annots [\(first + 1) 0 R \(first + 2) 0 R \(first + 3) 0 R] /AA << /O \(first) 0 R >>")],
                                       catalogExtra: "/OpenAction \(first) 0 R /Names << /JavaScript << /Names [(a) \(first) 0 R] >> >>",
                                       objects: objects)
        let image = try Self.coders.decode(pdf)
        #expect(Array(image.bitmap.rgba.prefix(4)) == [0, 255, 0, 255])
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.connectionCount == 0 && server.requestCount("/pdf-link") == 0)
        await server.stop()
    }

    @Test func notAPDFAndATruncatedOneFailWithATypedError() throws {
        let pdf = PDFFixtures.document([.init(width: 200, height: 150, content: PDFFixtures.shapes)])
        for bytes in [Data("%PDF-1.7\nnothing".utf8), pdf.prefix(40), pdf.prefix(pdf.count / 2)] {
            do {
                _ = try Self.coders.decode(bytes)
            } catch is ImageError {
            } catch {
                Issue.record("an untyped error: \(error)")
            }
        }
    }
}

/// `ImageContext.pdfPageIndex` through the manager: each page is an image of its own, cached
/// under its own key.
@Suite struct PDFPageLoadingTests {
    @Test func eachPageIsItsOwnImage() async throws {
        let h = try await ManagerHarness()
        let pdf = PDFFixtures.document([.init(width: 100, height: 100, content: "1 0 0 rg 0 0 100 100 re f"),
                                        .init(width: 120, height: 60, content: "0 0 1 rg 0 0 120 60 re f")])
        h.server.route("/doc.pdf", .respond(contentType: "application/pdf", body: pdf))
        var firstPage = ImageContext()
        firstPage.coder = PDFCoder()
        var second = firstPage
        second.pdfPageIndex = 1
        let first = try await h.manager.image(for: h.url("/doc.pdf"), context: firstPage)
        let other = try await h.manager.image(for: h.url("/doc.pdf"), context: second)
        #expect(first.width == 100 && other.width == 120 && other.height == 60)
        let downloads = h.server.requestCount("/doc.pdf")
        // Both are memory hits now, each under its own key.
        #expect(try await h.manager.image(for: h.url("/doc.pdf"), context: second).width == 120)
        #expect(try await h.manager.image(for: h.url("/doc.pdf"), context: firstPage).width == 100)
        #expect(h.server.requestCount("/doc.pdf") == downloads)
        await h.finish()
    }
}

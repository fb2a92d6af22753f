import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer
@testable import WebImageSVG

/// SVG through librsvg, against the SVG section of the modern corpus: renders as rsvg-convert
/// does at the intrinsic size, at the size a load asks for, and hostile files refused or
/// rendered without their hostile part and without any network or file access.
@Suite(.serialized) struct SVGTests {
    static let coders = ImageCoders([SVGCoder()] + ImageCoders.builtIn)
    static var entries: [[String: Any]] { ModernCorpus.entries().filter { $0["folder"] as? String == "svg" } }

    func reference(_ path: String) throws -> Bitmap { try Image(data: try ModernCorpus.data(path)).bitmap }

    @Test func everyDocumentRendersAsRsvgConvertDoes() throws {
        let documents = Self.entries.filter { $0["expect"] as? String == "decode" }
        #expect(documents.count == 9)
        for entry in documents {
            let path = entry["path"] as! String
            let image = try Self.coders.decode(try ModernCorpus.data(path))
            #expect(image.format == .svg && image.width == entry["width"] as? Int && image.height == entry["height"] as? Int, "\(path)")
            let tolerance = try #require(entry["tolerance"] as? [String: Any])
            let distance = try #require(PixelDistance(image.bitmap, try reference(entry["reference"] as! String)), "\(path)")
            #expect(distance.meanAbs <= tolerance["mean_abs"] as! Double, "\(path): mean \(distance.meanAbs)")
        }
    }

    /// Hostile documents: refused with an `ImageError`, or rendered like their safe reference,
    /// with nothing connecting to the canary port their references name.
    @Test func hostileDocumentsAreRefusedOrRenderedSafely() async throws {
        let manifest = try JSONSerialization.jsonObject(with: try ModernCorpus.data("manifest.json")) as! [String: Any]
        let canary = Canary()
        try await canary.start(port: manifest["canary_port"] as! Int)
        defer { Task { await canary.stop() } }
        let hostile = Self.entries.filter { $0["expect"] as? String == "reject-or-render-safely" }
        #expect(hostile.count == 7)
        var rendered = 0
        for entry in hostile {
            let path = entry["path"] as! String
            let start = ContinuousClock.now
            do {
                let image = try Self.coders.decode(try ModernCorpus.data(path))
                rendered += 1
                if let safe = entry["safe_reference"] as? String {
                    let distance = try #require(PixelDistance(image.bitmap, try reference(safe)), "\(path): size")
                    #expect(distance.meanAbs <= 3, "\(path): mean \(distance.meanAbs)")
                }
            } catch let error as ImageError {
                _ = error   // refused cleanly
            }
            #expect(ContinuousClock.now - start < .seconds(5), "\(path) took too long")
        }
        #expect(rendered >= 1)
        #expect(canary.connections == 0, "a hostile document reached the network")
    }

    /// Entity declarations: plain internal ones (Illustrator's) pass; nested, external and
    /// parameter entities are refused before libxml2 sees them.
    @Test func onlyPlainInternalEntitiesAreAccepted() throws {
        func document(_ declarations: String, _ text: String = "x") -> Data {
            Data("""
            <?xml version="1.0"?>
            <!DOCTYPE svg [ \(declarations) ]>
            <svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><text>\(text)</text></svg>
            """.utf8)
        }
        #expect(try Self.coders.decode(document(#"<!ENTITY ns_svg "http://www.w3.org/2000/svg">"#, "&ns_svg;")).width == 20)
        // Expanded before libxml2 sees the document: no declaration is left in it.
        let expanded = try SVGCoder.expandingEntities(in: document(#"<!ENTITY w "20"> <!ENTITY c 'red'>"#, "&c; &amp; &w;"))
        #expect(!String(decoding: expanded, as: UTF8.self).contains("ENTITY"))
        #expect(String(decoding: expanded, as: UTF8.self).contains("<text>red &amp; 20</text>"))
        for hostile in [#"<!ENTITY a "x"> <!ENTITY b "&a;&a;">"#, #"<!ENTITY x SYSTEM "file:///etc/passwd">"#,
                        #"<!ENTITY % p SYSTEM "http://127.0.0.1/x.dtd"> %p;"#, #"<!ENTITY x PUBLIC "-//x" "http://127.0.0.1/">"#] {
            #expect(throws: ImageError.self) { try Self.coders.decode(document(hostile)) }
        }
        for path in ["svg/hostile_billion_laughs.svg", "svg/hostile_xxe.svg"] {
            #expect { try Self.coders.decode(try ModernCorpus.data(path)) } throws: { error in
                if case ImageError.undecodable(.svg, let reason) = error { return reason.contains("entit") }
                return false
            }
        }
    }

    /// 2,000 declared entities over a 1 MB document: one pass over the document, not one per
    /// declaration (which took over 30 s), and the same expansion as before.
    @Test func entityExpansionIsOnePass() throws {
        let declarations = (0..<2000).map { #"<!ENTITY e\#($0) "">"# }.joined(separator: " ") + #" <!ENTITY last "z">"#
        let text = String(repeating: "&e7;a&amp;&last;&unknown;&e", count: 1_000_000 / 27)
        let data = Data("<?xml version=\"1.0\"?>\n<!DOCTYPE svg [ \(declarations) ]>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><text>\(text)</text></svg>".utf8)
        let start = ContinuousClock.now
        let expanded = try SVGCoder.expandingEntities(in: data)
        #expect(ContinuousClock.now - start < .seconds(3))
        let body = String(decoding: expanded, as: UTF8.self)
        #expect(body.hasPrefix("<?xml version=\"1.0\"?>\n\n<svg"))
        #expect(body.contains("<text>a&amp;z&unknown;&ea&amp;z&unknown;&ea"))
    }

    @Test func aLoadAsksForItsSizeAndTheVectorIsDrawnAtIt() throws {
        let data = try ModernCorpus.data("svg/viewbox_px.svg")   // 120x80
        let big = try Self.coders.decode(data, options: .init(maxPixelSize: 600))
        #expect(big.width == 600 && big.height == 400, "a vector image is drawn at the asked size, enlarged")
        let small = try Self.coders.decode(data, options: .init(maxPixelSize: 128))
        #expect(small.width == 128 && small.height == 86, "rsvg-convert -w 128 -h 128 -a gives 128x86")
        let filled = try Self.coders.decode(data, options: .init(fillSize: PixelSize(width: 60, height: 60)))
        #expect(filled.width == 90 && filled.height == 60)
        // Drawn at size, not drawn small and enlarged: the edges stay sharp.
        let upscaled = small.bitmap.areaDownscaled(toWidth: 128, height: 86)
        #expect(upscaled == small.bitmap)
    }

    @Test func theSizeIsCheckedBeforeDrawing() throws {
        let huge = try ModernCorpus.data("svg/hostile_huge_size.svg")
        #expect { try Self.coders.decode(huge) } throws: { error in
            if case ImageError.tooLarge = error { return true }
            return false
        }
        // At a thumbnail size the same document is drawn small.
        let thumbnail = try Self.coders.decode(huge, options: .init(maxPixelSize: 64))
        #expect(max(thumbnail.width, thumbnail.height) == 64)
        // A 120x80 document is over a 1000-pixel limit.
        #expect(throws: ImageError.self) { try Self.coders.decode(try ModernCorpus.data("svg/viewbox_px.svg"), options: .init(pixelLimit: 1000)) }
    }

    @Test func aDocumentWithoutSizeOrViewBoxGetsTheBrowsersDefault() throws {
        let data = Data(#"<svg xmlns="http://www.w3.org/2000/svg"><rect width="10" height="10" fill="red"/></svg>"#.utf8)
        let image = try Self.coders.decode(data)
        #expect(image.width == SVGCoder.defaultSize.width && image.height == SVGCoder.defaultSize.height)
        #expect(image.bitmap[5, 5] == (255, 0, 0, 255) && image.bitmap[50, 50].a == 0)
    }

    @Test func brokenDocumentsAreTypedErrors() {
        for text in ["<svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"><g></svg>", "<?xml version=\"1.0\"?><svg><!-- unterminated"] {
            #expect(throws: ImageError.self) { try Self.coders.decode(Data(text.utf8)) }
        }
    }

    /// Through the manager (a thumbnail of the document) and through `webimage serve`, which
    /// renders an SVG source to a raster format.
    @Test func theManagerAndTheServerRenderSVGSources() async throws {
        SVGCoder.register()
        let h = try await ManagerHarness()
        h.server.route("/logo.svg", .respond(contentType: "image/svg+xml", body: try ModernCorpus.data("svg/gradients.svg")))
        var context = ImageContext()
        context.thumbnailPixelSize = PixelSize(width: 192, height: 192)
        let image = try await h.manager.image(for: h.url("/logo.svg"), context: context)
        #expect(image.width == 192 && image.height == 128)
        await h.finish()

        let server = try await ServerHarness()
        server.origin.route("/logo.svg", .respond(contentType: "image/svg+xml", body: try ModernCorpus.data("svg/gradients.svg")))
        let reply = try await Curl.get(server.url(options: "w:48", source: "/logo.svg"))
        #expect(reply.status == 200 && reply.headers["content-type"] == "image/png")
        let png = try Image(data: reply.body)
        #expect(png.width == 48 && png.height == 32)
        await server.finish()
    }
}

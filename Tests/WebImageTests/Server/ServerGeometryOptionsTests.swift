import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy's geometry options through `webimage serve`: each result's size, and its pixels
/// against the library's own crop and resize or against Pillow, over a 64x48 source.
@Suite(.serialized) struct ServerGeometryOptionsTests {
    static let source = Fixtures.gradient(width: 64, height: 48, opaque: true)
    static let png = try! Image(bitmap: source).encoded(as: .png)

    static func image(_ h: ServerHarness, _ options: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Image {
        let reply = try await Curl.get(h.url(options: options, source: "/a.png"))
        #expect(reply.status == 200, "\(options): \(String(decoding: reply.body, as: UTF8.self))", sourceLocation: sourceLocation)
        return try Image(data: reply.body)
    }

    @Test func resizeTypesEnlargeZoomAndMinimumSizes() async throws {
        let h = try await ServerHarness()
        h.origin.route("/a.png", .respond(body: Self.png))
        let sizes: [(String, Int, Int)] = [
            ("rs:fit:32:32", 32, 24), ("rs:fill:32:32", 32, 32), ("rs:fill-crop:32:32", 32, 32), ("rs:fill:100:100", 64, 48),
            ("rs:fill-down:100:50", 64, 32), ("rs:fill-down:32:16", 32, 16), ("rs:force:10:30", 10, 30), ("rs:exact:10:30", 10, 30),
            ("rs:auto:40:20", 40, 20), ("rs:auto:20:40", 20, 15), ("rs:cover:20:20", 27, 20), ("rs:fit:128:128:1", 128, 96),
            ("rs:fit:128:128/el:1", 128, 96), ("rs:fill:128:64:t", 128, 64), ("s:32:0", 32, 24), ("rt:fill/w:16/h:16", 16, 16),
            ("w:32/mw:80", 80, 60), ("h:12/mh:24", 32, 24), ("z:0.5", 32, 24), ("z:2", 128, 96), ("z:1:0.5", 64, 24),
            ("w:32/dpr:2", 64, 48), ("c:32:24", 32, 24), ("c:0.5:0.5", 32, 24), ("c:40:0/rs:fit:20:20", 17, 20),
            ("rs:fit:100:100/ex:1", 100, 100), ("rs:fit:100:60:0:1", 100, 60), ("pd:10:20", 104, 68), ("pd:1:2:3:4/dpr:2", 76, 56),
            ("rs:fit:16:16/pd:2", 20, 16), ("rot:90/pd:1", 50, 66),
        ]
        for (options, width, height) in sizes {
            let image = try await Self.image(h, options)
            #expect(image.width == width && image.height == height, "\(options): \(image.width)x\(image.height), not \(width)x\(height)")
        }
        #expect(h.origin.requestCount("/a.png") == 1)
        await h.finish()
    }

    @Test func cropsAndExtensionsFollowTheirGravity() async throws {
        let h = try await ServerHarness()
        h.origin.route("/a.png", .respond(body: Self.png))
        let s = Self.source
        // A crop without a resize is the source's pixels, exactly.
        for (options, x, y) in [("c:32:24:nowe", 0, 0), ("c:32:24:soea", 32, 24), ("c:32:24", 16, 12), ("c:20:20:fp:0.9:0.1", 44, 0),
                                ("c:32:24:nowe/g:nowe:3:2", 3, 2)] {
            let got = try await Self.image(h, options).bitmap
            let expected = try CroppingTransformer(x: Double(x), y: Double(y), width: Double(got.width), height: Double(got.height)).transform(s)
            #expect(got == expected, "\(options)")
        }
        // fill: the resize (`cover`'s result), then the crop where the gravity says (the offsets
        // move it inward).
        let scaled = try await Self.image(h, "rs:cover:32:32/f:png").bitmap
        #expect(scaled.width == 43 && scaled.height == 32)
        for (options, x) in [("rs:fill:32:32/g:we", 0), ("rs:fill:32:32/g:ea", 11), ("rs:fill:32:32/g:ea:4:0", 7), ("rs:fill:32:32", 6)] {
            let expected = try CroppingTransformer(x: Double(x), y: 0, width: 32, height: 32).transform(scaled)
            #expect(Fixtures.meanDifference(try await Self.image(h, options).bitmap, expected) < 0.01, "\(options)")
        }
        // Extended onto the background (transparent by default), placed by the extension's gravity.
        let centred = try await Self.image(h, "rs:fit:100:100/ex:1/bg:ff0000/f:png").bitmap
        #expect(centred[0, 0] == (255, 0, 0, 255) && centred[99, 99] == (255, 0, 0, 255) && centred[50, 50] == s[50 - 18, 50 - 26])
        let corner = try await Self.image(h, "rs:fit:100:100/ex:1:nowe").bitmap
        #expect(corner[0, 0] == s[0, 0] && corner[99, 99].a == 0 && corner[63, 47] == s[63, 47])
        let padded = try await Self.image(h, "pd:2:4/bg:00ff00").bitmap
        #expect(padded[0, 0] == (0, 255, 0, 255) && padded[4, 2] == s[0, 0] && padded[71, 51] == (0, 255, 0, 255))
        // A JPEG result flattens transparency onto the background.
        let transparent = try Image(bitmap: Fixtures.gradient(width: 64, height: 48)).encoded(as: .png)
        h.origin.route("/alpha.png", .respond(body: transparent))
        // The corner is black at alpha 128: over white, mid-grey; over red, dark red.
        let white = try Image(data: try await Curl.get(h.url(options: "f:jpeg/bg:ffffff/q:100", source: "/alpha.png")).body).bitmap
        #expect((118...136).contains(white[0, 0].r) && (118...136).contains(white[0, 0].g) && white[0, 0].a == 255, "\(white[0, 0])")
        let red = try Image(data: try await Curl.get(h.url(options: "f:jpeg/bg:ff0000/q:100", source: "/alpha.png")).body).bitmap
        #expect((118...136).contains(red[0, 0].r) && red[0, 0].g < 10, "\(red[0, 0])")
        await h.finish()
    }

    @Test func aFilledResizeMatchesPillow() async throws {
        let h = try await ServerHarness()
        let photo = TransformerTests.large   // 550x368
        h.origin.route("/photo.png", .respond(body: try Image(bitmap: photo).encoded(as: .png)))
        let ours = try Image(data: try await Curl.get(h.url(options: "rs:fill:200:200/f:png", source: "/photo.png")).body).bitmap
        // Decoded at the size that fills the box by area averaging (Pillow's BOX), then cropped.
        let pillow = try Pillow.apply("""
        s = 200 / 368
        r = im.resize((round(550 * s), 200), Image.BOX)
        x = int((r.width - 200) / 2 + 0.5)
        out = r.crop((x, 0, x + 200, 200))
        """, to: photo)
        let mae = Fixtures.meanDifference(ours, pillow)
        #expect(mae < 2, "mean absolute error \(mae)")
        await h.finish()
    }

    @Test func smartGravityKeepsTheSubject() async throws {
        let h = try await ServerHarness()
        // A grey field with a detailed subject in its right quarter.
        var rgba = [UInt8](repeating: 128, count: 400 * 200 * 4)
        for y in 40..<160 { for x in 300..<390 {
            let i = (y * 400 + x) * 4
            (rgba[i], rgba[i + 1], rgba[i + 2]) = (x ^ y) & 4 == 0 ? (230, 150, 120) : (30, 30, 220)
        } }
        for i in stride(from: 3, to: rgba.count, by: 4) { rgba[i] = 255 }
        h.origin.route("/subject.png", .respond(body: try Image(bitmap: Bitmap(width: 400, height: 200, rgba: rgba)).encoded(as: .png)))
        let smart = try Image(data: try await Curl.get(h.url(options: "rs:fill:100:100/g:sm/f:png", source: "/subject.png")).body).bitmap
        let centre = try Image(data: try await Curl.get(h.url(options: "rs:fill:100:100/f:png", source: "/subject.png")).body).bitmap
        func grey(_ b: Bitmap) -> Int { (0..<b.height).reduce(0) { n, y in n + (0..<b.width).filter { b[$0, y].r == 128 && b[$0, y].b == 128 }.count } }
        #expect(grey(centre) == 100 * 100, "the centre crop misses the subject")
        // The subject is 45x60 of the 100x100 result at best (7,300 grey pixels): the smart crop
        // holds all of it.
        #expect(grey(smart) <= 7_300, "the smart crop holds the subject: \(grey(smart)) grey pixels")
        // On a manual crop too.
        let cropped = try Image(data: try await Curl.get(h.url(options: "c:120:200:sm/f:png", source: "/subject.png")).body).bitmap
        #expect(grey(cropped) <= 120 * 200 - 90 * 120, "the whole 90x120 subject")
        await h.finish()
    }

    /// What looks at the pixels (a trim, a smart crop) is decided on the first frame: every frame
    /// of an animation is cut the same way, and the animation stays one size.
    @Test func anAnimationIsCutTheSameWayInEveryFrame() async throws {
        let h = try await ServerHarness()
        // Three frames: a white frame around a patch that grows; the trim of the first frame holds.
        var frames: [ImageFrame] = []
        for index in 0..<3 {
            var rgba = [UInt8](repeating: 255, count: 80 * 60 * 4)
            for y in 10..<50 { for x in 10..<(50 + index * 5) {
                let i = (y * 80 + x) * 4
                (rgba[i], rgba[i + 1], rgba[i + 2]) = (UInt8(40 * index), 90, 200)
            } }
            frames.append(ImageFrame(bitmap: Bitmap(width: 80, height: 60, rgba: rgba), duration: 0.1))
        }
        let gif = try Image(frames: frames, loopCount: 0, format: .gif).encoded(as: .gif)
        h.origin.route("/moving.gif", .respond(contentType: "image/gif", body: gif))
        for options in ["t:10/f:webp", "rs:fill:20:40/g:sm/f:webp", "t:10/rs:fill:16:16/g:sm/f:gif"] {
            let reply = try await Curl.get(h.url(options: options, source: "/moving.gif"))
            #expect(reply.status == 200, "\(options): \(String(decoding: reply.body, as: UTF8.self))")
            let animation = try ImageCoders.shared.decode(reply.body)
            #expect(animation.frameCount == 3 || options.hasSuffix("webp"), "\(options)")
            let sizes = Set(try (0..<animation.frameCount).map { index -> [Int] in
                let frame = try animation.frame(at: index).bitmap
                return [frame.width, frame.height]
            })
            #expect(sizes.count == 1, "\(options): \(sizes)")
        }
        let trimmed = try ImageCoders.shared.decode(try await Curl.get(h.url(options: "t:10/f:webp", source: "/moving.gif")).body)
        #expect(trimmed.width == 40 && trimmed.height == 40, "the first frame's trim: \(trimmed.width)x\(trimmed.height)")
        await h.finish()
    }

    @Test func trimAndEffectsAreApplied() async throws {
        let h = try await ServerHarness()
        let framed = try PaddingTransformer(top: 5, right: 5, bottom: 5, left: 5, color: .white).transform(Self.source)
        h.origin.route("/framed.png", .respond(body: try Image(bitmap: framed).encoded(as: .png)))
        h.origin.route("/a.png", .respond(body: Self.png))
        let trimmed = try Image(data: try await Curl.get(h.url(options: "t:2/f:png", source: "/framed.png")).body)
        #expect(trimmed.width <= 64 && trimmed.height <= 48 && trimmed.width >= 60)
        var bodies: Set<Data> = []
        for options in ["f:png", "sh:1/f:png", "pix:4/f:png", "pix:8/f:png", "br:30/f:png", "co:1.5/f:png", "sa:0/f:png", "a:10:1.2:0.5/f:png"] {
            let reply = try await Curl.get(h.url(options: options, source: "/a.png"))
            #expect(reply.status == 200, "\(options)")
            bodies.insert(reply.body)
        }
        #expect(bodies.count == 8, "every option changes the result (and has a result of its own)")
        let pixelated = try Image(data: try await Curl.get(h.url(options: "pix:8/f:png", source: "/a.png")).body).bitmap
        #expect(try pixelated == PixelatingTransformer(size: 8).transform(Self.source))
        let renders = h.server.processor.renders.load(ordering: .relaxed)
        _ = try await Curl.get(h.url(options: "pix:4/f:png", source: "/a.png"))
        #expect(h.server.processor.renders.load(ordering: .relaxed) == renders, "a warm request is not made again")
        await h.finish()
    }
}

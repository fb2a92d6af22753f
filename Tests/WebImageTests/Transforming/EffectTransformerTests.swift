import Foundation
import Testing
@testable import WebImage

/// The effect transformers an image proxy's options need, against Pillow doing the same
/// operation (sharpen, pixelate, brightness/contrast/saturation, watermark) or exact
/// expectations (padding, trim), on a real photo from the corpus.
@Suite struct EffectTransformerTests {
    static let photo = TransformerTests.large   // 550x368, opaque
    static let alpha = TransformerTests.alpha   // 32x32 with alpha

    @Test func sharpenIsPillowsUnsharpMask() throws {
        for sigma in [1.0, 2.5] {
            let ours = try SharpeningTransformer(sigma: sigma).transform(Self.photo)
            let pillow = try Pillow.apply("out = im.filter(ImageFilter.UnsharpMask(radius=\(sigma), percent=100, threshold=0))", to: Self.photo)
            let mae = Fixtures.meanDifference(ours, pillow)
            #expect(mae < 1.5, "sigma \(sigma): mean absolute error \(mae)")
            #expect(Fixtures.meanDifference(ours, Self.photo) > 1, "it changed the image")
        }
        #expect(try SharpeningTransformer(sigma: 0).transform(Self.photo) == Self.photo)
        #expect(throws: ImageError.self) { try SharpeningTransformer(sigma: .nan).transform(Self.photo) }
    }

    @Test func pixelateIsABoxAverageInBlocks() throws {
        // 550x368 in blocks of 2 and 8 (550 = 8 x 68 + 6: partial blocks at the edge are
        // averaged over what they cover; Pillow's reference is compared where blocks are whole).
        for size in [2, 8] {
            let ours = try PixelatingTransformer(size: size).transform(Self.photo)
            let (w, h) = (Self.photo.width / size * size, Self.photo.height / size * size)
            let pillow = try Pillow.apply("""
            c = im.crop((0, 0, \(w), \(h)))
            out = c.resize((\(w / size), \(h / size)), Image.BOX).resize((\(w), \(h)), Image.NEAREST)
            """, to: Self.photo)
            let cropped = try CroppingTransformer(x: 0, y: 0, width: Double(w), height: Double(h)).transform(ours)
            #expect(Fixtures.meanDifference(cropped, pillow) < 0.6, "size \(size)")
            #expect(ours[0, 0] == ours[size - 1, size - 1] && ours[549, 367] == ours[548, 366])
        }
        #expect(throws: ImageError.self) { try PixelatingTransformer(size: 0).transform(Self.photo) }
    }

    @Test func brightnessContrastAndSaturationAreTheDocumentedFormulas() throws {
        let brighter = try ColorAdjustingTransformer(brightness: 40).transform(Self.photo)
        let pillowBrighter = try Pillow.apply("""
        r, g, b, a = im.split()
        f = lambda v: min(255, v + 40)
        out = Image.merge("RGBA", (r.point(f), g.point(f), b.point(f), a))
        """, to: Self.photo)
        #expect(Fixtures.meanDifference(brighter, pillowBrighter) < 0.01)
        let contrast = try ColorAdjustingTransformer(contrast: 1.5).transform(Self.photo)
        let pillowContrast = try Pillow.apply("""
        r, g, b, a = im.split()
        f = lambda v: max(0, min(255, int((v - 128) * 1.5 + 128 + 0.5)))
        out = Image.merge("RGBA", (r.point(f), g.point(f), b.point(f), a))
        """, to: Self.photo)
        #expect(Fixtures.meanDifference(contrast, pillowContrast) < 0.5)
        for factor in [0.0, 0.5, 1.8] {
            let ours = try ColorAdjustingTransformer(saturation: factor).transform(Self.photo)
            let pillow = try Pillow.apply("""
            from PIL import ImageEnhance
            out = ImageEnhance.Color(im.convert("RGB")).enhance(\(factor))
            """, to: Self.photo)
            #expect(Fixtures.meanDifference(ours, pillow) < 0.8, "saturation \(factor)")
        }
        #expect(try ColorAdjustingTransformer().transform(Self.photo) == Self.photo)
        let kept = try ColorAdjustingTransformer(brightness: -50, contrast: 0.5, saturation: 0).transform(Self.alpha)
        #expect(kept.rgba.enumerated().filter { $0.offset % 4 == 3 }.map(\.element) == Self.alpha.rgba.enumerated().filter { $0.offset % 4 == 3 }.map(\.element))
    }

    @Test func paddingPlacesTheImageOnAColouredCanvas() throws {
        let red = Color(red: 1, green: 0, blue: 0)
        let padded = try PaddingTransformer(top: 3, right: 5, bottom: 7, left: 11, color: red).transform(Self.alpha)
        #expect(padded.width == 32 + 16 && padded.height == 32 + 10)
        #expect(padded[0, 0] == (255, 0, 0, 255) && padded[47, 41] == (255, 0, 0, 255) && padded[10, 20] == (255, 0, 0, 255))
        for (x, y) in [(0, 0), (31, 31), (12, 7)] { #expect(padded[x + 11, y + 3] == Self.alpha[x, y]) }
        #expect(try PaddingTransformer(top: 0, right: 0, bottom: 0, left: 0).transform(Self.alpha) == Self.alpha)
        #expect(throws: ImageError.self) { try PaddingTransformer(top: -1, right: 0, bottom: 0, left: 0).transform(Self.alpha) }
    }

    @Test func trimRemovesUniformBordersWithinTheThreshold() throws {
        let framed = try PaddingTransformer(top: 4, right: 9, bottom: 2, left: 6, color: Color(red: 1, green: 1, blue: 1)).transform(Self.photo)
        let trimmed = try TrimmingTransformer(threshold: 1).transform(framed)
        // The photo's own edge may be near white: the trim may cut into it, never leave the frame.
        #expect(trimmed.width <= 550 && trimmed.height <= 368 && trimmed.width > 500 && trimmed.height > 330)
        let reference = try Pillow.apply("""
        import numpy as np
        a = np.asarray(im).astype(int)
        diff = np.abs(a - a[0, 0]).max(axis=2) > 1
        ys, xs = np.nonzero(diff)
        out = im.crop((xs.min(), ys.min(), xs.max() + 1, ys.max() + 1))
        """, to: framed)
        #expect(trimmed == reference)
        let bounds = try #require(TrimmingTransformer(threshold: 1).bounds(of: framed))
        let equal = try #require(TrimmingTransformer(threshold: 1, equalHorizontal: true, equalVertical: true).bounds(of: framed))
        let cutX = min(bounds.x, framed.width - bounds.x - bounds.width), cutY = min(bounds.y, framed.height - bounds.y - bounds.height)
        #expect(equal.x == cutX && equal.width == framed.width - 2 * cutX && equal.y == cutY && equal.height == framed.height - 2 * cutY)
        #expect(equal.width > bounds.width, "the frame's sides differ (6 and 9): an equal cut keeps more")
        let blank = Bitmap(width: 10, height: 10, rgba: [UInt8](repeating: 255, count: 400))
        #expect(try TrimmingTransformer(threshold: 10).transform(blank) == blank, "all border: kept")
    }

    @Test func watermarkIsSourceOverWithOpacity() throws {
        let mark = Self.alpha
        let ours = try WatermarkTransformer(mark: mark, placement: .at(x: 100, y: 50), opacity: 0.6).transform(Self.photo)
        let markFile = TemporaryDirectory("mark")
        defer { markFile.remove() }
        let path = markFile.url.appendingPathComponent("m.png").path
        try Image(bitmap: mark).encoded(as: .png).write(to: URL(fileURLWithPath: path))
        let pillow = try Pillow.apply("""
        m = Image.open(\(String(reflecting: path))).convert("RGBA")
        m.putalpha(m.getchannel("A").point(lambda a: int(a * 0.6 + 0.5)))
        out = im.copy()
        out.alpha_composite(m, (100, 50))
        """, to: Self.photo)
        #expect(Fixtures.meanDifference(ours, pillow) < 0.05)
        let tiled = try WatermarkTransformer(mark: mark, placement: .tiled, opacity: 0.8).transform(Self.photo)
        let pillowTiled = try Pillow.apply("""
        m = Image.open(\(String(reflecting: path))).convert("RGBA")
        m.putalpha(m.getchannel("A").point(lambda a: int(a * 0.8 + 0.5)))
        out = im.copy()
        for y in range(0, out.height, m.height):
            for x in range(0, out.width, m.width):
                tile = m.crop((0, 0, min(m.width, out.width - x), min(m.height, out.height - y)))
                out.alpha_composite(tile, (x, y))
        """, to: Self.photo)
        #expect(Fixtures.meanDifference(tiled, pillowTiled) < 0.15, "one level of rounding at most on the blended pixels")
        #expect(Fixtures.meanDifference(tiled, Self.photo) > 1, "it drew something")
    }

    @Test func attentionKeepsAnOffCentreSubject() throws {
        // A flat grey field with a detailed, saturated subject near the right edge (and one near
        // the top): a square crop keeps it where the centre would not.
        for (subjectX, subjectY) in [(420, 150), (200, 20)] {
            var rgba = [UInt8](repeating: 0, count: 550 * 368 * 4)
            for y in 0..<368 {
                for x in 0..<550 {
                    let i = (y * 550 + x) * 4
                    let inside = abs(x - subjectX) < 60 && abs(y - subjectY) < 60
                    let (r, g, b): (UInt8, UInt8, UInt8) = inside ? ((x ^ y) & 8 == 0 ? (220, 140, 110) : (40, 20, 200)) : (128, 128, 128)
                    rgba[i] = r; rgba[i + 1] = g; rgba[i + 2] = b; rgba[i + 3] = 255
                }
            }
            let field = Bitmap(width: 550, height: 368, rgba: rgba)
            let (cw, ch) = subjectY > 100 ? (200, 368) : (550, 160)
            let (x, y) = try AttentionCrop.origin(of: cw, ch, in: field)
            #expect(x <= subjectX - 60 && x + cw >= subjectX + 60, "x \(x) for a subject at \(subjectX)")
            #expect(y <= subjectY - 60 + 0 || subjectY < 60, "y \(y)")
            #expect(y + ch >= min(368, subjectY + 60))
        }
        let flat = Bitmap(width: 100, height: 50, rgba: [UInt8](repeating: 128, count: 100 * 50 * 4))
        #expect(try AttentionCrop.origin(of: 50, 50, in: flat) == (25, 0), "nothing salient: the centre")
    }
}

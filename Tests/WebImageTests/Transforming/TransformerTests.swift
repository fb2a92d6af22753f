import Foundation
import Testing
@testable import WebImage

/// Each transformer on real images from the corpus, against exact expectations (flips,
/// right-angle turns, crops, grey) or against Pillow (resize, blur).
@Suite struct TransformerTests {
    static let photo = try! Image(data: Corpus.data("jpeg/hopper_orientation_6.jpg"), options: .init(appliesOrientation: false)).bitmap
    static let alpha = try! Image(data: Corpus.data("png/basn6a08.png")).bitmap   // 32x32 with alpha
    static let large = try! Image(data: Corpus.data("webp/1.webp")).bitmap          // 550x368

    func pixel(_ b: Bitmap, _ x: Int, _ y: Int) -> [UInt8] { let p = b[x, y]; return [p.r, p.g, p.b, p.a] }

    @Test func flipsAreExactPixelMoves() throws {
        let b = Self.large
        let h = try FlippingTransformer(horizontal: true, vertical: false).transform(b)
        let v = try FlippingTransformer(horizontal: false, vertical: true).transform(b)
        let both = try FlippingTransformer(horizontal: true, vertical: true).transform(b)
        for (x, y) in [(0, 0), (17, 5), (549, 367), (300, 200)] {
            #expect(pixel(h, x, y) == pixel(b, b.width - 1 - x, y))
            #expect(pixel(v, x, y) == pixel(b, x, b.height - 1 - y))
            #expect(pixel(both, x, y) == pixel(b, b.width - 1 - x, b.height - 1 - y))
        }
        #expect(try FlippingTransformer(horizontal: true, vertical: false).transform(h) == b)
    }

    @Test func rightAngleRotationsAreExact() throws {
        let b = Self.large
        let quarter = try RotationTransformer(angle: .pi / 2).transform(b)   // counterclockwise
        #expect(quarter.width == b.height && quarter.height == b.width)
        // The top-right source pixel ends at the top-left.
        #expect(pixel(quarter, 0, 0) == pixel(b, b.width - 1, 0))
        #expect(pixel(quarter, 10, 20) == pixel(b, b.width - 1 - 20, 10))
        var turned = b
        for _ in 0..<4 { turned = try RotationTransformer(angle: .pi / 2).transform(turned) }
        #expect(turned == b)
        #expect(try RotationTransformer(angle: -.pi).transform(b) == b.oriented(.down))
        let kept = try RotationTransformer(angle: .pi / 2, fitSize: false).transform(b)
        #expect(kept.width == b.width && kept.height == b.height)
        #expect(kept[0, 0].a == 0)   // the canvas outside the turned image is transparent
    }

    @Test func otherAnglesGrowTheCanvasAndRoundTrip() throws {
        let b = Self.large
        let rotated = try RotationTransformer(angle: .pi / 6, fitSize: true).transform(b)
        let (c, s) = (cos(Double.pi / 6), sin(Double.pi / 6))
        #expect(abs(Double(rotated.width) - (550 * c + 368 * s)) <= 1)
        #expect(abs(Double(rotated.height) - (550 * s + 368 * c)) <= 1)
        #expect(rotated[0, 0].a == 0 && rotated[rotated.width / 2, rotated.height / 2].a == 255)
        let back = try RotationTransformer(angle: -.pi / 6, fitSize: true).transform(rotated)
        let centre = try CroppingTransformer(x: Double((back.width - 200) / 2), y: Double((back.height - 200) / 2), width: 200, height: 200).transform(back)
        let original = try CroppingTransformer(x: 175, y: 84, width: 200, height: 200).transform(b)
        #expect(Fixtures.meanDifference(centre, original) < 8)   // two bilinear resamplings
        let same = try RotationTransformer(angle: 0.3, fitSize: false).transform(b)
        #expect(same.width == b.width && same.height == b.height)
    }

    @Test func cropsAreExactAndClamped() throws {
        let b = Self.large
        let crop = try CroppingTransformer(x: 100, y: 50, width: 64, height: 32).transform(b)
        #expect(crop.width == 64 && crop.height == 32)
        #expect(pixel(crop, 0, 0) == pixel(b, 100, 50) && pixel(crop, 63, 31) == pixel(b, 163, 81))
        let clamped = try CroppingTransformer(x: 500, y: 300, width: 200, height: 200).transform(b)
        #expect(clamped.width == 50 && clamped.height == 68)
        #expect(throws: ImageError.self) { try CroppingTransformer(x: 600, y: 0, width: 10, height: 10).transform(b) }
        #expect(throws: ImageError.self) { try CroppingTransformer(x: -50, y: -50, width: 10, height: 10).transform(b) }
    }

    @Test func grayscaleMatchesPillowsLuma() throws {
        let ours = try GrayscaleTransformer().transform(Self.large)
        let pillow = try Pillow.apply("out = im.convert('L')", to: Self.large)
        for y in stride(from: 0, to: ours.height, by: 7) {
            for x in stride(from: 0, to: ours.width, by: 5) {
                #expect(ours[x, y].r == pillow[x, y].r && ours[x, y].g == ours[x, y].r && ours[x, y].a == Self.large[x, y].a)
            }
        }
    }

    @Test(arguments: [(256, 171), (100, 67), (900, 602)])
    func resizeMatchesPillowLanczos(width: Int, height: Int) throws {
        for source in [Self.large, Self.photo] {
            let ours = try ResizingTransformer(width: Double(width), height: Double(height)).transform(source)
            let pillow = try Pillow.apply("out = im.resize((\(width), \(height)), Image.LANCZOS)", to: source)
            let mae = Fixtures.meanDifference(ours, pillow)
            #expect(mae < 1.5, "mean absolute error \(mae) for \(width)x\(height)")
        }
    }

    @Test func resizeInPremultipliedAlphaHasNoDarkFringe() throws {
        // Opaque white square on transparent black.
        var bytes = [UInt8](repeating: 0, count: 64 * 64 * 4)
        for y in 16..<48 { for x in 16..<48 { let o = (y * 64 + x) * 4; bytes[o] = 255; bytes[o + 1] = 255; bytes[o + 2] = 255; bytes[o + 3] = 255 } }
        let small = try ResizingTransformer(width: 13, height: 13).transform(Bitmap(width: 64, height: 64, rgba: bytes))
        for y in 0..<13 { for x in 0..<13 where small[x, y].a > 0 { #expect(small[x, y].r >= 250, "dark fringe at \(x),\(y)") } }
        let pillow = try Pillow.apply("out = im.resize((13, 13), Image.LANCZOS)", to: Bitmap(width: 64, height: 64, rgba: bytes))
        #expect(Fixtures.meanDifference(small, pillow) < 1.5)
    }

    @Test func scaleModes() throws {
        let b = Self.large  // 550x368
        let fit = try ResizingTransformer(width: 100, height: 100, scaleMode: .aspectFit).transform(b)
        #expect(fit.width == 100 && fit.height == 100)
        #expect(fit[50, 0].a == 0 && fit[50, 50].a == 255)          // letterboxed top and bottom
        let fill = try ResizingTransformer(width: 100, height: 100, scaleMode: .aspectFill).transform(b)
        #expect(fill.width == 100 && fill.height == 100 && fill[0, 0].a == 255)
        // Aspect fill samples the centred 368x368 window of the source: the same as cropping it first
        // (only the border taps differ: inside the source they see the neighbours).
        let window = try CroppingTransformer(x: 91, y: 0, width: 368, height: 368).transform(b)
        let reference = try ResizingTransformer(width: 100, height: 100).transform(window)
        #expect(Fixtures.meanDifference(fill, reference) < 1)
        let up = try ResizingTransformer(width: 1100, height: 736).transform(b)
        let down = try ResizingTransformer(width: 550, height: 368).transform(up)
        #expect(up.width == 1100)
        #expect(Fixtures.meanDifference(down, b) < 3)
    }

    @Test func blurMatchesPillowGaussianBlur() throws {
        for radius in [2.0, 8.0] {
            let ours = try BlurTransformer(radius: radius).transform(Self.large)
            let pillow = try Pillow.apply("out = im.filter(ImageFilter.GaussianBlur(\(radius)))", to: Self.large)
            let mae = Fixtures.meanDifference(ours, pillow)
            #expect(mae < 1.5, "radius \(radius): mean absolute error \(mae)")
        }
        let flat = Bitmap(width: 40, height: 30, rgba: [UInt8](repeating: 200, count: 40 * 30 * 4))
        #expect(try BlurTransformer(radius: 6).transform(flat) == flat)
        #expect(try BlurTransformer(radius: 0).transform(Self.large) == Self.large)
    }

    @Test func tintIsSourceAtop() throws {
        let red = Color(red: 1, green: 0, blue: 0)
        let full = try TintTransformer(color: red).transform(Self.alpha)
        let half = try TintTransformer(color: Color(red: 1, green: 0, blue: 0, alpha: 0.5)).transform(Self.alpha)
        for (x, y) in [(0, 0), (16, 16), (31, 31)] {
            let source = Self.alpha[x, y]
            #expect(full[x, y] == (255, 0, 0, source.a))
            #expect(abs(Int(half[x, y].r) - (Int(source.r) + 255 + 1) / 2) <= 1)
            #expect(half[x, y].a == source.a)
        }
    }

    @Test func roundCornersAreAntialiasedWithABorder() throws {
        let b = Self.large
        let round = try RoundCornerTransformer(radius: 40).transform(b)
        #expect(round[0, 0].a == 0 && round[549, 367].a == 0)
        #expect(pixel(round, 275, 184) == pixel(b, 275, 184))          // centre untouched
        #expect(pixel(round, 275, 0) == pixel(b, 275, 0))              // straight edges untouched
        let arc = (0..<40).map { round[$0, $0 / 3].a }
        #expect(arc.contains { $0 > 0 && $0 < 255 })                    // anti-aliased
        let some = try RoundCornerTransformer(radius: 40, corners: [.topLeft]).transform(b)
        #expect(some[0, 0].a == 0 && pixel(some, 549, 0) == pixel(b, 549, 0))
        let bordered = try RoundCornerTransformer(radius: 40, borderWidth: 4, borderColor: Color(red: 0, green: 0, blue: 1)).transform(b)
        #expect(bordered[275, 1] == (0, 0, 255, 255))
        #expect(pixel(bordered, 275, 10) == pixel(b, 275, 10))
        let huge = try RoundCornerTransformer(radius: 10_000).transform(b)      // clamped to half the short side
        #expect(huge[0, 184].a == 255 && huge[0, 0].a == 0)
    }

    @Test func animatedImagesHaveEveryFrameTransformed() throws {
        let gif = try Image(data: Corpus.data("gif/chi.gif"))
        let out = try ResizingTransformer(width: 160, height: 120).transform(gif)
        #expect(out.frameCount == gif.frameCount && out.loopCount == gif.loopCount && out.frameDurations == gif.frameDurations)
        #expect(try out.frame(at: 5).bitmap.width == 160)
        let pipeline = try PipelineTransformer([GrayscaleTransformer(), FlippingTransformer(horizontal: true, vertical: false)]).transform(gif)
        #expect(pipeline.frameCount == gif.frameCount)
        #expect(try pipeline.frame(at: 3).bitmap == GrayscaleTransformer().transform(gif.frame(at: 3).bitmap).oriented(.upMirrored))
    }

    /// An animation decoded on demand is transformed on demand: the result holds one canvas and
    /// its source (counted in its cost), each frame equal to the frame transformed by itself; a
    /// preloaded one is transformed at once.
    @Test func aLazyAnimationIsTransformedFrameByFrame() async throws {
        let data = try Corpus.data("gif/chi.gif")
        let lazy = try Image(data: data)
        let flip = FlippingTransformer(horizontal: true, vertical: false)
        let out = try flip.transform(lazy)
        guard case .lazy = out.frames else { Issue.record("the transformed animation holds every frame"); return }
        #expect(out.memoryCost == out.bitmap.byteCount * 2 + lazy.memoryCost)
        for index in [0, 1, 7, 2, lazy.frameCount - 1] {
            #expect(try out.frame(at: index).bitmap == flip.transform(lazy.frame(at: index).bitmap), "frame \(index)")
        }
        let preloaded = try Image(data: data, options: ImageDecodingOptions(preloadAllFrames: true))
        guard case .preloaded = try flip.transform(preloaded).frames else { Issue.record("a preloaded animation stays preloaded"); return }
        // Cancelled, the next frame is not made.
        let task = Task { () -> Bool in
            withUnsafeCurrentTask { $0?.cancel() }
            do { _ = try out.frame(at: 3); return false } catch { return error is CancellationError }
        }
        #expect(await task.value, "a cancelled task's frame throws CancellationError")
    }
}

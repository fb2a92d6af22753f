import Foundation
import Testing
@testable import WebImage

/// Degenerate parameters and images: a clear `ImageError.transformFailed` or a defined clamp.
@Suite struct TransformerBadInputTests {
    static let everyTransformer: [any ImageTransformer] = [
        ResizingTransformer(width: 3, height: 2), ResizingTransformer(width: 5, height: 5, scaleMode: .aspectFit),
        ResizingTransformer(width: 5, height: 5, scaleMode: .aspectFill), CroppingTransformer(x: 0, y: 0, width: 1, height: 1),
        FlippingTransformer(horizontal: true, vertical: true), RotationTransformer(angle: 0.5), RotationTransformer(angle: .pi / 2),
        RoundCornerTransformer(radius: 3, borderWidth: 1, borderColor: .white), TintTransformer(color: .black),
        BlurTransformer(radius: 4), GrayscaleTransformer(),
    ]

    func expectFailure(_ transformer: any ImageTransformer, _ image: Image, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation, performing: { _ = try transformer.transform(image) }, throws: { error in
            if case ImageError.transformFailed = error { return true }
            return false
        })
    }

    let image = Image(bitmap: Fixtures.gradient(width: 20, height: 10))

    @Test func invalidSizesAnglesAndRadiiFail() {
        for (w, h) in [(0.0, 10.0), (-5, 10), (10, 0.2), (.nan, 10), (10, .infinity)] {
            expectFailure(ResizingTransformer(width: w, height: h), image)
        }
        expectFailure(ResizingTransformer(width: 200_000, height: 200_000), image)
        for angle in [Double.nan, .infinity, -.infinity] { expectFailure(RotationTransformer(angle: angle), image) }
        for radius in [Double.nan, .infinity, -1] {
            expectFailure(BlurTransformer(radius: radius), image)
            expectFailure(RoundCornerTransformer(radius: radius), image)
        }
        expectFailure(RoundCornerTransformer(radius: 2, borderWidth: .nan), image)
        expectFailure(CroppingTransformer(x: .nan, y: 0, width: 5, height: 5), image)
        expectFailure(CroppingTransformer(x: 0, y: 0, width: 0, height: 5), image)
        expectFailure(CroppingTransformer(x: 25, y: 0, width: 5, height: 5), image)
    }

    @Test(arguments: [(1, 1), (1, 37), (37, 1), (2, 2)])
    func tinyImagesWorkEverywhere(width: Int, height: Int) throws {
        let tiny = Image(bitmap: Fixtures.gradient(width: width, height: height))
        for transformer in Self.everyTransformer {
            let out = try transformer.transform(tiny)
            #expect(out.width >= 1 && out.height >= 1, "\(transformer.key)")
        }
    }

    @Test func thirtyThousandPixelStrip() throws {
        let strip = Image(bitmap: Fixtures.gradient(width: 30_000, height: 2, opaque: true))
        #expect(try ResizingTransformer(width: 300, height: 1).transform(strip).width == 300)
        #expect(try BlurTransformer(radius: 3).transform(strip).width == 30_000)
        #expect(try RotationTransformer(angle: .pi / 2).transform(strip).height == 30_000)
        #expect(try RoundCornerTransformer(radius: 50).transform(strip).width == 30_000)
        #expect(try CroppingTransformer(x: 29_990, y: 0, width: 100, height: 2).transform(strip).width == 10)
    }

    @Test func fullyTransparentImagesStayTransparent() throws {
        let clear = Image(bitmap: Bitmap(width: 16, height: 16))
        for transformer in Self.everyTransformer where !(transformer is TintTransformer) && !(transformer is RoundCornerTransformer) {
            let out = try transformer.transform(clear)
            #expect(!out.bitmap.rgba.contains { $0 != 0 }, "\(transformer.key)")
        }
        // Tint is source-atop and round corners only cut: alpha stays 0 everywhere.
        for transformer in [TintTransformer(color: .white), RoundCornerTransformer(radius: 4)] as [any ImageTransformer] {
            let out = try transformer.transform(clear).bitmap
            #expect((0..<16).allSatisfy { y in (0..<16).allSatisfy { out[$0, y].a == 0 } }, "\(transformer.key)")
        }
    }
}

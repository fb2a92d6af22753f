import Testing
@testable import WebImage

/// Keys in SDWebImage's format (its own test's parameters), with this library's type names.
@Suite struct TransformerKeyTests {
    @Test func keysFollowSDWebImagesFormat() {
        #expect(ResizingTransformer(width: 100, height: 100, scaleMode: .aspectFill).key == "ResizingTransformer({100.000000,100.000000},2)")
        #expect(RotationTransformer(angle: .pi / 4, fitSize: false).key == "RotationTransformer(0.785398,0)")
        #expect(RoundCornerTransformer(radius: 50, corners: .all, borderWidth: 1, borderColor: .black).key
                == "RoundCornerTransformer(50.000000,15,1.000000,#ff000000)")
        #expect(FlippingTransformer(horizontal: true, vertical: true).key == "FlippingTransformer(1,1)")
        #expect(CroppingTransformer(x: 0, y: 0, width: 50, height: 50).key == "CroppingTransformer({0.000000,0.000000,50.000000,50.000000})")
        #expect(TintTransformer(color: .clear).key == "TintTransformer(#00000000)")
        #expect(BlurTransformer(radius: 5).key == "BlurTransformer(5.000000)")
        #expect(GrayscaleTransformer().key == "GrayscaleTransformer")
    }

    @Test func pipelineJoinsKeysAndMatchesTheCacheKeyRule() {
        let pipeline = PipelineTransformer([FlippingTransformer(horizontal: true, vertical: false),
                                            RotationTransformer(angle: .pi / 4, fitSize: true)])
        #expect(pipeline.key == "FlippingTransformer(1,0)-RotationTransformer(0.785398,1)")
        #expect(CacheKeys.transformedKey(for: "image.png", transformerKey: pipeline.key)
                == "image-FlippingTransformer(1,0)-RotationTransformer(0.785398,1).png")
        #expect(PipelineTransformer([]).key == "")
    }
}

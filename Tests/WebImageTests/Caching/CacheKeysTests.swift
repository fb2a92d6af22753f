import Testing
@testable import WebImage

/// The examples of SDWebImage's own test of its transformed-key rule, and its thumbnail key.
@Suite struct CacheKeysTests {
    let t = "FlippingTransformer(1,0)"

    @Test(arguments: [
        ("image.png", "image-FlippingTransformer(1,0).png"),
        ("image", "image-FlippingTransformer(1,0)"),
        (".image", ".image-FlippingTransformer(1,0)"),
        ("image.", "image.-FlippingTransformer(1,0)"),
        ("Test/image.png", "Test/image-FlippingTransformer(1,0).png"),
        ("http://foo/image.png", "http://foo/image-FlippingTransformer(1,0).png"),
        ("http://foo/image", "http://foo/image-FlippingTransformer(1,0)"),
        ("http://foo/.image", "http://foo/.image-FlippingTransformer(1,0)"),
        ("http://foo/image.png?foo=bar#mark", "http://foo/image-FlippingTransformer(1,0).png?foo=bar#mark"),
        ("ftp://root:password@foo.com/image.png", "ftp://root:password@foo.com/image-FlippingTransformer(1,0).png"),
    ])
    func transformedKeyFollowsSDWebImage(key: String, expected: String) {
        #expect(CacheKeys.transformedKey(for: key, transformerKey: t) == expected)
    }

    @Test func pipelineKeysChain() {
        let once = CacheKeys.transformedKey(for: "image.png", transformerKey: "FlippingTransformer(1,0)")
        let twice = CacheKeys.transformedKey(for: once, transformerKey: "RotationTransformer(0.785398,1)")
        #expect(twice == "image-FlippingTransformer(1,0)-RotationTransformer(0.785398,1).png")
    }

    @Test func thumbnailKey() {
        // A key with an extension is parsed as a (relative) URL, as NSURL does for SDWebImage:
        // the braces are percent-encoded in the path, as NSURLComponents encodes them.
        #expect(CacheKeys.thumbnailedKey(for: "image.png", width: 100, height: 50, preserveAspectRatio: true)
                == "image-Thumbnail(%7B100.000000,50.000000%7D,1).png")
        #expect(CacheKeys.thumbnailedKey(for: "photo", width: 64, height: 64, preserveAspectRatio: false)
                == "photo-Thumbnail({64.000000,64.000000},0)")
        #expect(CacheKeys.thumbnailedKey(for: "https://x.test/a.jpg?s=1", width: 10, height: 10, preserveAspectRatio: true)
                == "https://x.test/a-Thumbnail(%7B10.000000,10.000000%7D,1).jpg?s=1")
    }
}

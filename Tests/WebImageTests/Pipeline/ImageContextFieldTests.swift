import Foundation
import Testing
@testable import WebImage

/// The fields of `ImageContext` live in one table that merging and emptiness read: every field
/// is in it, a field set alone makes a context non-empty, and merging takes an unset field from
/// the defaults and keeps a set one.
@Suite struct ImageContextFieldTests {
    /// Sets one public field each; with the table checked complete below, a field missing here
    /// is still merged, only not walked by these tests.
    static let setters: [(name: String, set: @Sendable (inout ImageContext) -> Void, isSet: @Sendable (ImageContext) -> Bool)] = [
        ("transformer", { $0.transformer = FlippingTransformer(horizontal: true, vertical: false) }, { $0.transformer != nil }),
        ("usesTransformer", { $0.usesTransformer = false }, { $0.usesTransformer == false }),
        ("thumbnailPixelSize", { $0.thumbnailPixelSize = PixelSize(width: 8, height: 8) }, { $0.thumbnailPixelSize?.width == 8 }),
        ("fillPixelSize", { $0.fillPixelSize = PixelSize(width: 8, height: 8) }, { $0.fillPixelSize?.width == 8 }),
        ("fillAnchor", { $0.fillAnchor = FillAnchor(x: 0, y: 1) }, { $0.fillAnchor == FillAnchor(x: 0, y: 1) }),
        ("preserveAspectRatio", { $0.preserveAspectRatio = false }, { $0.preserveAspectRatio == false }),
        ("imageScaleFactor", { $0.imageScaleFactor = 2 }, { $0.imageScaleFactor == 2 }),
        ("scaleDownLimitBytes", { $0.scaleDownLimitBytes = 1234 }, { $0.scaleDownLimitBytes == 1234 }),
        ("decodePixelLimit", { $0.decodePixelLimit = 4321 }, { $0.decodePixelLimit == 4321 }),
        ("colorSpace", { $0.colorSpace = .original }, { $0.colorSpace == .original }),
        ("queryCacheType", { $0.queryCacheType = .memory }, { $0.queryCacheType == .memory }),
        ("storeCacheType", { $0.storeCacheType = .disk }, { $0.storeCacheType == .disk }),
        ("originalQueryCacheType", { $0.originalQueryCacheType = .all }, { $0.originalQueryCacheType == .all }),
        ("originalStoreCacheType", { $0.originalStoreCacheType = .memory }, { $0.originalStoreCacheType == .memory }),
        ("cacheKeyFilter", { $0.cacheKeyFilter = .droppingQuery }, { $0.cacheKeyFilter != nil }),
        ("cacheSerializer", { $0.cacheSerializer = CacheSerializer { _, data, _ in data } }, { $0.cacheSerializer != nil }),
        ("downloadTimeout", { $0.downloadTimeout = .seconds(3) }, { $0.downloadTimeout == .seconds(3) }),
        ("loadTimeout", { $0.loadTimeout = .seconds(4) }, { $0.loadTimeout == .seconds(4) }),
        ("alternativeSources", { $0.alternativeSources = [URL(string: "https://example.com/b.png")!] }, { $0.alternativeSources?.count == 1 }),
        ("previewInterval", { $0.previewInterval = .milliseconds(250) }, { $0.previewInterval == .milliseconds(250) }),
        ("priority", { $0.priority = LoadPriority(.high) }, { $0.priority != nil }),
        ("httpCachePolicy", { $0.httpCachePolicy = .ignoreHeaders }, { $0.httpCachePolicy == .ignoreHeaders }),
        ("dataCachePolicy", { $0.dataCachePolicy = .storeAll }, { $0.dataCachePolicy == .storeAll }),
        ("cacheEncoding", { $0.cacheEncoding = CacheEncoding(format: .png) }, { $0.cacheEncoding != nil }),
    ]

    @Test func everyFieldIsInTheTable() {
        let counts = ImageContext.fieldCounts
        #expect(counts.declared == counts.tabled)
        #expect(counts.declared >= Self.setters.count)
    }

    @Test(arguments: 0..<setters.count)
    func aFieldSetAloneIsMergedOverTheDefaultsAndFilledFromThem(_ index: Int) {
        let (name, set, isSet) = Self.setters[index]
        var context = ImageContext()
        #expect(context.isEmpty)
        set(&context)
        #expect(!context.isEmpty, "\(name)")
        #expect(isSet(context), "\(name)")
        // Set here: kept over defaults that set another field; unset here: taken from the defaults.
        var other = ImageContext()
        Self.setters[(index + 1) % Self.setters.count].set(&other)
        let mergedOver = context.merged(over: other)
        #expect(isSet(mergedOver), "\(name) kept")
        #expect(Self.setters[(index + 1) % Self.setters.count].isSet(mergedOver), "\(name): the other field filled")
        #expect(isSet(ImageContext().merged(over: context)), "\(name) filled from the defaults")
    }
}

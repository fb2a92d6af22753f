import Foundation

/// What a load's merged context decides about keys, decoding and sharing, read out of the
/// context once. A call with an empty context (most calls) uses the manager's defaults, whose
/// settings are worked out when the manager is made: a call that joins work in flight then reads
/// no context field at all.
struct CallSettings: Sendable {
    let query: ImageCacheType
    let store: ImageCacheType
    let originalQuery: ImageCacheType
    let originalStore: ImageCacheType
    /// `preserveAspectRatio == false`: thumbnails are stretched to the box.
    let stretches: Bool
    let preservesAspectRatio: Bool
    let cacheID: ObjectIdentifier?
    let loaderID: ObjectIdentifier?
    let coderID: ObjectIdentifier?
    let keyFilter: CacheKeyFilter?
    let thumbnail: PixelSize?
    let transformerKey: String?
    let imageScaleFactor: Double?
    let scaleDownLimitBytes: Int?

    init(_ context: ImageContext) {
        query = context.queryCacheType ?? .all
        store = context.storeCacheType ?? .all
        originalQuery = context.originalQueryCacheType ?? .none
        originalStore = context.originalStoreCacheType ?? .disk
        stretches = context.preserveAspectRatio == false
        preservesAspectRatio = context.preserveAspectRatio ?? true
        cacheID = instanceIdentity(context.cache)
        loaderID = instanceIdentity(context.loader)
        coderID = instanceIdentity(context.coder)
        keyFilter = context.cacheKeyFilter
        thumbnail = context.thumbnailPixelSize
        transformerKey = context.transformer?.key
        imageScaleFactor = context.imageScaleFactor
        scaleDownLimitBytes = context.scaleDownLimitBytes
    }

    /// The original key (filter applied) and the final key (thumbnail, then transformer).
    func cacheKeys(for url: URL, absoluteString: String) -> (original: String?, final: String?) {
        let original: String?
        if let keyFilter { original = keyFilter.key(url) } else { original = absoluteString }
        guard var key = original else { return (nil, nil) }
        if let thumbnail {
            key = CacheKeys.thumbnailedKey(for: key, width: Double(thumbnail.width), height: Double(thumbnail.height),
                                           preserveAspectRatio: preservesAspectRatio)
        }
        if let transformerKey {
            key = CacheKeys.transformedKey(for: key, transformerKey: transformerKey)
        }
        return (original, key)
    }

    /// The decode options that `options` and these settings ask for.
    func decodeOptions(_ options: ImageOptions, key: String) -> ImageDecodingOptions {
        var decode = ImageDecodingOptions()
        decode.firstFrameOnly = options.contains(.decodeFirstFrameOnly)
        decode.preloadAllFrames = options.contains(.preloadAllFrames) && !options.contains(.avoidDecodeImage)
        decode.scale = imageScaleFactor ?? ImageManager.scaleFactor(forKey: key)
        if let thumbnail, thumbnail.width > 0, thumbnail.height > 0 {
            decode.maxPixelSize = max(thumbnail.width, thumbnail.height)
        }
        if options.contains(.scaleDownLargeImages) {
            decode.maxPixelCount = max(1, (scaleDownLimitBytes ?? 60 << 20) / 4)
        }
        return decode
    }
}

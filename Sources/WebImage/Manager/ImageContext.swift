import Foundation

/// Per-load settings that are not on/off switches (SDWebImage's `SDWebImageContext`), as typed
/// fields. A field left nil falls back to the manager configuration's default context, then to
/// the library default. Extra values for custom loaders, caches or coders go through
/// `subscript(_:)` with an `ImageContextKey`.
///
/// A load whose own context sets a closure (modifiers, decryptor, key filter, serializer) or a
/// loader, cache or coder that is not a class instance is never shared with other loads: the
/// manager cannot tell two such closures apart.
public struct ImageContext: Sendable {
    /// Transforms the decoded image; its key becomes part of the cache key.
    public var transformer: (any ImageTransformer)?
    /// Decode at most this size (a thumbnail); becomes part of the cache key.
    public var thumbnailPixelSize: PixelSize?
    /// With a thumbnail size, keep the aspect ratio (default true) or stretch to the size.
    public var preserveAspectRatio: Bool?
    /// The image's scale factor; default: from an `@2x`/`@3x` suffix of the cache key, else 1.
    public var imageScaleFactor: Double?
    /// The pixel budget for `.scaleDownLargeImages`, in bytes of RGBA pixels (default 60 MB).
    public var scaleDownLimitBytes: Int?
    /// Where to look for the image (default `.all`).
    public var queryCacheType: ImageCacheType?
    /// Where to store the loaded image (default `.all`).
    public var storeCacheType: ImageCacheType?
    /// Where to look for the untransformed original when the transformed image is not cached
    /// (default `.disk`): a hit is transformed instead of downloading again.
    public var originalQueryCacheType: ImageCacheType?
    /// Where to store the original data when the image is transformed or a thumbnail (default `.disk`).
    public var originalStoreCacheType: ImageCacheType?
    /// Turns a URL into its cache key (default: the absolute string).
    public var cacheKeyFilter: CacheKeyFilter?
    /// Encodes a transformed image for the disk cache (default: its source format).
    public var cacheSerializer: CacheSerializer?
    /// Changes or refuses the request (beats the loader's own modifier).
    public var requestModifier: RequestModifier?
    /// Inspects, rewrites or refuses the response (beats the loader's own modifier).
    public var responseModifier: ResponseModifier?
    /// Turns downloaded bytes into image bytes (beats the loader's own decryptor).
    public var decryptor: Decryptor?
    /// Stall and total timeout of the download (default: the loader's).
    public var downloadTimeout: Duration?
    /// The cache to use instead of the manager's.
    public var cache: (any ImageCaching)?
    /// The loader to use instead of the manager's registry.
    public var loader: (any ImageLoader)?
    /// The coder to decode with instead of the manager's registry.
    public var coder: (any ImageCoder)?
    /// The shortest time between two progressive previews (default 0.1 s).
    public var previewInterval: Duration?
    private var custom: [ObjectIdentifier: any Sendable] = [:]

    /// An empty context: every setting falls back to its default.
    public init() {}

    /// A context with the most used fields set.
    public init(transformer: (any ImageTransformer)? = nil, thumbnailPixelSize: PixelSize? = nil,
                storeCacheType: ImageCacheType? = nil, cache: (any ImageCaching)? = nil, loader: (any ImageLoader)? = nil) {
        self.transformer = transformer
        self.thumbnailPixelSize = thumbnailPixelSize
        self.storeCacheType = storeCacheType
        self.cache = cache
        self.loader = loader
    }

    /// A custom value, for keys defined by custom loaders, caches and coders.
    public subscript<Key: ImageContextKey>(key: Key.Type) -> Key.Value? {
        get { custom[ObjectIdentifier(key)] as? Key.Value }
        set { custom[ObjectIdentifier(key)] = newValue }
    }

    /// This context with every nil field taken from `defaults`.
    func merged(over defaults: ImageContext) -> ImageContext {
        var result = self
        result.transformer = transformer ?? defaults.transformer
        result.thumbnailPixelSize = thumbnailPixelSize ?? defaults.thumbnailPixelSize
        result.preserveAspectRatio = preserveAspectRatio ?? defaults.preserveAspectRatio
        result.imageScaleFactor = imageScaleFactor ?? defaults.imageScaleFactor
        result.scaleDownLimitBytes = scaleDownLimitBytes ?? defaults.scaleDownLimitBytes
        result.queryCacheType = queryCacheType ?? defaults.queryCacheType
        result.storeCacheType = storeCacheType ?? defaults.storeCacheType
        result.originalQueryCacheType = originalQueryCacheType ?? defaults.originalQueryCacheType
        result.originalStoreCacheType = originalStoreCacheType ?? defaults.originalStoreCacheType
        result.cacheKeyFilter = cacheKeyFilter ?? defaults.cacheKeyFilter
        result.cacheSerializer = cacheSerializer ?? defaults.cacheSerializer
        result.requestModifier = requestModifier ?? defaults.requestModifier
        result.responseModifier = responseModifier ?? defaults.responseModifier
        result.decryptor = decryptor ?? defaults.decryptor
        result.downloadTimeout = downloadTimeout ?? defaults.downloadTimeout
        result.cache = cache ?? defaults.cache
        result.loader = loader ?? defaults.loader
        result.coder = coder ?? defaults.coder
        result.previewInterval = previewInterval ?? defaults.previewInterval
        result.custom = defaults.custom.merging(custom) { _, mine in mine }
        return result
    }

    /// Whether this context was left entirely at its defaults (the common, fastest case).
    var isEmpty: Bool {
        transformer == nil && thumbnailPixelSize == nil && preserveAspectRatio == nil && imageScaleFactor == nil
            && scaleDownLimitBytes == nil && queryCacheType == nil && storeCacheType == nil && originalQueryCacheType == nil
            && originalStoreCacheType == nil && cacheKeyFilter == nil && cacheSerializer == nil && requestModifier == nil
            && responseModifier == nil && decryptor == nil && downloadTimeout == nil && cache == nil && loader == nil
            && coder == nil && previewInterval == nil && custom.isEmpty
    }

    /// Whether loads with this context can share work with other loads of the same key: false
    /// when it carries closures or value-type plug-ins that cannot be compared.
    var isShareable: Bool {
        cacheKeyFilter == nil && cacheSerializer == nil && requestModifier == nil && responseModifier == nil
            && decryptor == nil && custom.isEmpty
            && (cache.map { type(of: $0) is AnyClass } ?? true)
            && (loader.map { type(of: $0) is AnyClass } ?? true)
            && (coder.map { type(of: $0) is AnyClass } ?? true)
    }
}

/// A key for a custom `ImageContext` value.
public protocol ImageContextKey {
    /// The type of the value stored under this key.
    associatedtype Value: Sendable
}

/// A size in pixels.
public struct PixelSize: Sendable, Hashable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// A size of `width` x `height` pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// Turns a URL into a cache key (SDWebImage's `SDWebImageCacheKeyFilter`); nil means: do not cache.
public struct CacheKeyFilter: Sendable {
    /// The filter.
    public let key: @Sendable (URL) -> String?

    /// A filter from a function.
    public init(_ key: @escaping @Sendable (URL) -> String?) { self.key = key }

    /// Drops the query string, so that signed or versioned URLs share one entry.
    public static let droppingQuery = CacheKeyFilter { url in
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.query = nil
        return components.string ?? url.absoluteString
    }
}

/// Encodes an image for the disk cache (SDWebImage's `SDWebImageCacheSerializer`): given the
/// image, the downloaded data when the image is untransformed, and the URL; nil stores nothing
/// on disk.
public struct CacheSerializer: Sendable {
    /// The serializer.
    public let serialize: @Sendable (Image, Data?, URL) -> Data?

    /// A serializer from a function.
    public init(_ serialize: @escaping @Sendable (Image, Data?, URL) -> Data?) { self.serialize = serialize }
}

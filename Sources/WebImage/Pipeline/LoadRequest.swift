import Foundation

/// The library defaults of the per-load settings, written once: the code reads them here, and
/// the doc comments of `ImageContext` and the DocC table state the same values. Each is current
/// SDWebImage 5.x's (`SDWebImageManager.m`, `SDWebImageDefine.m`).
enum LoadDefaults {
    /// `SDWebImageContextQueryCacheType`: memory, then disk.
    static let queryCacheType: ImageCacheType = .all
    /// `SDWebImageContextStoreCacheType`: memory and disk.
    static let storeCacheType: ImageCacheType = .all
    /// `SDWebImageContextOriginalQueryCacheType`: look for the original on disk when a transformed
    /// or thumbnail image is missing (5.x before the original-cache context started at none).
    static let originalQueryCacheType: ImageCacheType = .disk
    /// `SDWebImageContextOriginalStoreCacheType`: the original of a transformed image goes to disk.
    static let originalStoreCacheType: ImageCacheType = .disk
    /// `SDWebImageContextImagePreserveAspectRatio`.
    static let preserveAspectRatio = true
    /// `SDWebImageContextImageScaleDownLimitBytes` when unset (SDImageCoderHelper's default limit).
    static let scaleDownLimitBytes = 60 << 20
    /// The shortest time between two progressive previews (ours; SDWebImage has no throttle).
    static let previewInterval: Duration = .milliseconds(100)
    /// Ours: the origin's caching headers are followed (what a server-side user, and Nuke's
    /// default `URLCache`, expect); a response that says nothing is kept as SDWebImage keeps it.
    static let httpCachePolicy: HTTPCachePolicy = .respectHeaders
}

/// Everything one call decided, built once by the manager's synchronous admit step from the URL,
/// the options (with the configuration's) and the context merged over the defaults: cache types,
/// keys, decode options, transformer, coder, priority. No stage reads a context field or a
/// default itself; the hooks the loader and the serializer take as they are stay in `context`.
///
/// A class: every stage of the shared work holds it, and the in-flight keys (`WorkKey`,
/// `DownloadKey` and `DataKey`, built from it) keep a reference instead of a copy of its fields.
@usableFromInline
final class LoadRequest: Sendable {
    /// What the merged context decides, whatever the URL and options. The manager works it out
    /// once for its default context (most calls pass none) and shares it: a call then reads no
    /// context field and copies no setting.
    final class Settings: Sendable {
        let context: ImageContext
        let cache: any ImageCaching
        /// Where the untransformed original of a transformed or reduced image is queried and
        /// stored (`ImageContext.originalCache`, else `cache`).
        let originalCache: any ImageCaching
        /// Whether `cache` answers memory hits and stores without suspending (its capabilities).
        let hasSynchronousMemory: Bool
        let queryType: ImageCacheType
        let storeType: ImageCacheType
        let originalQueryType: ImageCacheType
        let originalStoreType: ImageCacheType
        let keyFilter: CacheKeyFilter?
        let transformer: (any ImageTransformer)?
        let transformerKey: String?
        /// The thumbnail size asked for (part of the key even when zero).
        let thumbnailSize: PixelSize?
        /// The thumbnail box, when the size is not zero.
        let thumbnail: PixelSize?
        /// The fill box, when a side is not zero.
        let fillSize: PixelSize?
        /// Where the fill box is cut, when both its sides are set (`ImageContext.fillAnchor`).
        let fillAnchor: FillAnchor?
        let preservesAspectRatio: Bool
        let imageScaleFactor: Double?
        let scaleDownLimitBytes: Int
        let colorSpace: ImageColorSpace
        /// The document page to decode (`ImageContext.pdfPageIndex`), from 0.
        let pageIndex: Int
        /// What an HDR image becomes (`ImageContext.dynamicRange`).
        let dynamicRange: ImageDynamicRange
        /// The decoded depth (`ImageContext.bitDepth`).
        let bitDepth: ImageBitDepth
        let previewInterval: Duration
        /// Whether previews are kept in memory (`ImageContext.storesPreviewsInMemory`).
        let storesPreviews: Bool
        /// The format the bytes are said to be in (`ImageContext.formatHint`).
        let formatHint: ImageFormat?
        let coder: (any ImageCoder)?
        let loader: (any ImageLoader)?
        let timeout: Duration?
        let retry: RetryStrategy?
        let priorityHandle: LoadPriority?
        /// Whether the disk cache follows the origin's headers for this load.
        let respectsHTTPHeaders: Bool
        /// Whether the headers are read as a shared cache reads them (`.respectHeadersShared`).
        let isSharedCache: Bool
        /// Whether a request modifier may change the headers the loader sends (a `Vary`
        /// response is then not stored: its variant cannot be known before the request).
        let modifiesRequests: Bool
        let dataCachePolicy: DataCachePolicy
        let cacheEncoding: CacheEncoding?
        let cacheID: ObjectIdentifier?
        let originalCacheID: ObjectIdentifier?
        let loaderID: ObjectIdentifier?
        let coderID: ObjectIdentifier?

        /// Whether the decoded image is smaller than the original (a thumbnail or a fill size).
        var reducesDecode: Bool { thumbnailSize != nil || fillSize != nil }

        /// Whether a load may write to disk: its entry, or the original of a transformed or
        /// reduced image (as `originalStoreType` or the data-cache policy asks). Only then, or
        /// when the origin's headers rule memory too, does a response's cache metadata need
        /// reading.
        var mayWriteDisk: Bool {
            storeType.includesDisk || (transformer != nil || reducesDecode)
                && (originalStoreType.includesDisk || dataCachePolicy == .storeOriginalData || dataCachePolicy == .storeAll)
        }

        /// Whether a loaded response's cache metadata (validators, freshness) is used.
        var readsResponseMetadata: Bool { respectsHTTPHeaders || mayWriteDisk }

        /// The settings of `context` (merged over the defaults already); `cache` is the manager's.
        init(_ context: ImageContext, cache defaultCache: any ImageCaching) {
            self.context = context
            cache = context.cache ?? defaultCache
            originalCache = context.originalCache ?? cache
            hasSynchronousMemory = cache.capabilities.contains(.synchronousMemory)
            queryType = context.queryCacheType ?? LoadDefaults.queryCacheType
            storeType = context.storeCacheType ?? LoadDefaults.storeCacheType
            originalQueryType = context.originalQueryCacheType ?? LoadDefaults.originalQueryCacheType
            originalStoreType = context.originalStoreCacheType ?? LoadDefaults.originalStoreCacheType
            keyFilter = context.cacheKeyFilter
            transformer = context.usesTransformer == false ? nil : context.transformer
            transformerKey = transformer?.key
            thumbnailSize = context.thumbnailPixelSize
            thumbnail = thumbnailSize.flatMap { $0.width > 0 && $0.height > 0 ? $0 : nil }
            fillSize = context.fillPixelSize.flatMap { $0.width > 0 || $0.height > 0 ? $0 : nil }
            fillAnchor = fillSize.flatMap { $0.width > 0 && $0.height > 0 ? context.fillAnchor : nil }
            preservesAspectRatio = context.preserveAspectRatio ?? LoadDefaults.preserveAspectRatio
            imageScaleFactor = context.imageScaleFactor
            scaleDownLimitBytes = context.scaleDownLimitBytes ?? LoadDefaults.scaleDownLimitBytes
            colorSpace = context.colorSpace ?? .sRGB
            pageIndex = max(0, context.pdfPageIndex ?? 0)
            dynamicRange = context.dynamicRange ?? .standard
            bitDepth = context.bitDepth ?? .eight
            previewInterval = context.previewInterval ?? LoadDefaults.previewInterval
            storesPreviews = context.storesPreviewsInMemory ?? false
            formatHint = context.formatHint
            coder = context.coder
            loader = context.loader
            timeout = context.downloadTimeout
            retry = context.retryStrategy
            priorityHandle = context.priority
            let policy = context.httpCachePolicy ?? LoadDefaults.httpCachePolicy
            respectsHTTPHeaders = policy.respectsHeaders
            isSharedCache = policy == .respectHeadersShared
            modifiesRequests = context.requestModifier != nil || context.asyncRequestModifier != nil
            dataCachePolicy = context.dataCachePolicy ?? .automatic
            cacheEncoding = context.cacheEncoding
            cacheID = instanceIdentity(context.cache)
            originalCacheID = instanceIdentity(context.originalCache)
            loaderID = instanceIdentity(context.loader)
            coderID = instanceIdentity(context.coder)
        }
    }

    /// The URL loaded from: the asked one, or an alternative source.
    let url: URL
    let urlString: String
    /// The URL asked for (what results name); `url` unless this loads an alternative source.
    let resultURL: URL
    let options: ImageOptions
    let settings: Settings
    /// The final cache key (filter, then thumbnail, then fill size, then transformer); nil when the key filter
    /// says not to cache.
    let cacheKey: String?
    /// The key of the untransformed, full-size image (the filter's key).
    let originalKey: String?
    /// Whether the caller asks the memory cache first (and may join work in flight).
    let queriesMemory: Bool
    let decodeOptions: ImageDecodingOptions
    /// The priority from the options (`.highPriority`, `.lowPriority`).
    let priority: ImageLoaderPriority
    /// False when the caller's own context holds closures or values the manager cannot compare:
    /// the call shares no work (its keys equal only themselves).
    let isShareable: Bool
    /// Whether the call was plain (no options, no context of its own, no options processor):
    /// every plain call of a URL makes this same request, so one can join its work by the URL.
    let isPlain: Bool

    /// Decides everything for a call of `url` with merged `options` and the merged context's
    /// `settings`; `isShareable` is whether the caller's own context can be compared with others'.
    init(url: URL, urlString: String, options: ImageOptions, settings: Settings, isShareable: Bool, isPlain: Bool = false) {
        self.url = url
        self.urlString = urlString
        resultURL = url
        self.options = options
        self.settings = settings
        self.isShareable = isShareable
        self.isPlain = isPlain
        priority = ImageLoaderPriority(options)

        // Keys: the filter's key is the original's; the thumbnail, then the transformer, extend it.
        var original = settings.keyFilter.map { $0.key(url) } ?? urlString
        // Images kept in their own colour space are other images than the (default) sRGB ones.
        if settings.colorSpace == .original, let base = original {
            original = CacheKeys.transformedKey(for: base, transformerKey: "ColorSpace(original)")
        }
        // Another page of a document is another image (its bytes are the same: the data is
        // shared, the decoded image is not).
        if settings.pageIndex > 0, let base = original {
            original = CacheKeys.transformedKey(for: base, transformerKey: "Page(\(settings.pageIndex))")
        }
        // HDR kept is another image than the (default) tone-mapped one.
        if settings.dynamicRange == .high, let base = original {
            original = CacheKeys.transformedKey(for: base, transformerKey: "DynamicRange(high)")
        }
        if settings.bitDepth == .source, let base = original {
            original = CacheKeys.transformedKey(for: base, transformerKey: "BitDepth(source)")
        }
        originalKey = original
        var key = original
        if let size = settings.thumbnailSize, let base = key {
            key = CacheKeys.thumbnailedKey(for: base, width: Double(size.width), height: Double(size.height),
                                           preserveAspectRatio: settings.preservesAspectRatio)
        }
        if let size = settings.fillSize, let base = key {
            key = settings.fillAnchor.map { CacheKeys.filledKey(for: base, width: size.width, height: size.height, anchor: $0) }
                ?? CacheKeys.filledKey(for: base, width: size.width, height: size.height)
        }
        if let transformerKey = settings.transformerKey, let base = key {
            key = CacheKeys.transformedKey(for: base, transformerKey: transformerKey)
        }
        cacheKey = key

        var decode = ImageDecodingOptions()
        decode.firstFrameOnly = options.contains(.decodeFirstFrameOnly)
        decode.preloadAllFrames = options.contains(.preloadAllFrames) && !options.contains(.avoidDecodeImage)
        decode.scale = settings.imageScaleFactor ?? ImageManager.scaleFactor(forKey: key ?? urlString)
        if let box = settings.thumbnail { decode.maxPixelSize = max(box.width, box.height) }
        decode.fillSize = settings.fillSize
        decode.fillAnchor = settings.fillAnchor
        if options.contains(.scaleDownLargeImages) { decode.maxPixelCount = max(1, settings.scaleDownLimitBytes / 4) }
        if let limit = settings.context.decodePixelLimit { decode.pixelLimit = max(1, limit) }
        decode.colorSpace = settings.colorSpace
        decode.pageIndex = settings.pageIndex
        decode.dynamicRange = settings.dynamicRange
        decode.bitDepth = settings.bitDepth
        decodeOptions = decode
        queriesMemory = key != nil && !options.contains(.fromLoaderOnly) && !options.contains(.refreshCached)
            && settings.queryType.includesMemory
    }

    /// The same request loading from `source`: keys, options and settings stay the asked URL's.
    private init(source: URL, of base: LoadRequest) {
        url = source
        urlString = source.absoluteString
        resultURL = base.resultURL
        options = base.options
        settings = base.settings
        cacheKey = base.cacheKey
        originalKey = base.originalKey
        queriesMemory = base.queriesMemory
        decodeOptions = base.decodeOptions
        priority = base.priority
        isShareable = base.isShareable
        isPlain = false
    }

    /// The same request revalidating its entry in the background: `.refreshCached`, at low
    /// priority, not waiting for its stores.
    var refreshing: LoadRequest {
        LoadRequest(url: url, urlString: urlString,
                    options: options.union([.refreshCached, .lowPriority]).subtracting([.waitStoreCache, .highPriority]),
                    settings: settings, isShareable: isShareable)
    }

    /// This request's alternative sources, as requests that load from them.
    var alternatives: [LoadRequest] {
        (settings.context.alternativeSources ?? []).map { LoadRequest(source: $0, of: self) }
    }

    // The settings, read through the request.
    var context: ImageContext { settings.context }
    var cache: any ImageCaching { settings.cache }
    var queryType: ImageCacheType { settings.queryType }
    var storeType: ImageCacheType { settings.storeType }
    var originalQueryType: ImageCacheType { settings.originalQueryType }
    var originalStoreType: ImageCacheType { settings.originalStoreType }
    var transformer: (any ImageTransformer)? { settings.transformer }
    var thumbnail: PixelSize? { settings.thumbnail }
    var preservesAspectRatio: Bool { settings.preservesAspectRatio }
    var previewInterval: Duration { settings.previewInterval }
    var coder: (any ImageCoder)? { settings.coder }
    var loader: (any ImageLoader)? { settings.loader }
    var timeout: Duration? { settings.timeout }
    var cacheID: ObjectIdentifier? { settings.cacheID }
    var loaderID: ObjectIdentifier? { settings.loaderID }
    var coderID: ObjectIdentifier? { settings.coderID }
    /// Whether a memory hit is answered without suspending: the cache's memory answers at once
    /// and the call wants no data from disk with the hit.
    var answersMemoryAtOnce: Bool { settings.hasSynchronousMemory && !options.contains(.queryMemoryData) }
    /// Whether the work asks the disk cache (or the cached original) before the loader.
    var queriesDisk: Bool { cacheKey != nil && !options.contains(.fromLoaderOnly) }
    /// The priority the caller subscribes with: its handle's, else its options'.
    var callerPriority: ImageLoaderPriority { settings.priorityHandle?.value ?? priority }

    /// Whether the result differs from the plain full-size decode of the original.
    var isDerived: Bool { settings.transformer != nil || settings.reducesDecode }
    /// Whether the decode may give less than the whole image (first frame only, scaled down)
    /// while the key is the plain one: such an image never goes into memory under that key,
    /// or a later plain call would get the reduced image.
    var decodeReducesPlainKey: Bool {
        !isDerived && (decodeOptions.firstFrameOnly || decodeOptions.maxPixelCount != nil || decodeOptions.maxPixelSize != nil)
    }
    /// Where this load's images may go in memory: nowhere for a reduced decode under the plain key.
    var memoryStoreType: ImageCacheType {
        decodeReducesPlainKey ? ImageCacheType(memory: false, disk: storeType.includesDisk) : storeType
    }

    /// The request sent to the loader; `validators` make it conditional (`.refreshCached`);
    /// `backlog` is the manager's (see `ImageLoaderRequest.backlog`). Never inlined: its
    /// temporaries would size the async frame of every transfer.
    @inline(never)
    func loaderRequest(validators: CacheValidators?, priority handle: LoadPriority? = nil, backlog: BacklogGate? = nil) -> ImageLoaderRequest {
        var request = ImageLoaderRequest(
            url: url, timeout: timeout, priority: handle?.value ?? priority,
            allowsInvalidCertificates: options.contains(.allowInvalidSSLCertificates),
            handlesCookies: options.contains(.handleCookies))
        request.priorityHandle = handle
        request.requestModifier = context.requestModifier
        request.asyncRequestModifier = context.asyncRequestModifier
        request.responseModifier = context.responseModifier
        request.decryptor = context.decryptor
        request.context = context
        request.backlog = backlog
        if let validators {
            request.acceptsNotModified = true
            if let etag = validators.etag { request.headers["If-None-Match"] = etag }
            if let lastModified = validators.lastModified { request.headers["If-Modified-Since"] = lastModified }
        }
        return request
    }
}

/// The identity of a plug-in when it is a class instance.
func instanceIdentity(_ value: Any?) -> ObjectIdentifier? {
    guard let value, type(of: value) is AnyClass else { return nil }
    return ObjectIdentifier(value as AnyObject)
}

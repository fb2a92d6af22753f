import Foundation
import Synchronization

/// Per-load settings that are not on/off switches (SDWebImage's `SDWebImageContext`), as typed
/// fields. A field left nil falls back to the manager configuration's default context, then to
/// the library default. Extra values for custom loaders, caches or coders go through
/// `subscript(_:)` with an `ImageContextKey`.
///
/// A load whose own context sets a closure (modifiers, decryptor, key filter, serializer) or a
/// loader, cache or coder that is not a class instance is never shared with other loads: the
/// manager cannot tell two such closures apart.
public struct ImageContext: Sendable {
    /// The values, shared between copies until one of them changes (copy on write): a context is
    /// copied on every call, and most are empty. Nil when empty: an empty context (every call's
    /// default argument) then holds no reference, and making or dropping one touches no shared
    /// reference count.
    private var storage: Storage?

    /// Transforms the decoded image; its key becomes part of the cache key.
    public var transformer: (any ImageTransformer)? {
        get { storage?.fields.transformer }
        set { mutate { $0.transformer = newValue } }
    }
    /// False: this call applies no transformer, not even the one the manager was configured
    /// with (SDWebImage's `NSNull` transformer in the context); its image is the one cached
    /// under the untransformed key. Nil or true: `transformer`, else the manager's.
    public var usesTransformer: Bool? {
        get { storage?.fields.usesTransformer }
        set { mutate { $0.usesTransformer = newValue } }
    }
    /// Decode at most this size (a thumbnail); becomes part of the cache key.
    public var thumbnailPixelSize: PixelSize? {
        get { storage?.fields.thumbnailPixelSize }
        set { mutate { $0.thumbnailPixelSize = newValue } }
    }
    /// Decode at the smallest size that still fills this box (width and height at least the
    /// box's, a side of 0 free; aspect ratio kept, never enlarged), for a transformer that crops
    /// or resamples to the box afterwards: JPEG and WebP skip the pixels it would throw away.
    /// Not in SDWebImage (its thumbnail fits inside the box); becomes part of the cache key.
    public var fillPixelSize: PixelSize? {
        get { storage?.fields.fillPixelSize }
        set { mutate { $0.fillPixelSize = newValue } }
    }
    /// With a `fillPixelSize` of two sides: the image is that box, cut at this anchor out of
    /// the image that fills it (Nuke's `Resize(crop: true)`; `.center` for its middle). A JPEG
    /// then decodes only the rows the box keeps. A still image smaller than the box on a side
    /// is kept whole. Becomes part of the cache key.
    public var fillAnchor: FillAnchor? {
        get { storage?.fields.fillAnchor }
        set { mutate { $0.fillAnchor = newValue } }
    }
    /// With a thumbnail size, keep the aspect ratio (default true) or stretch to the size.
    public var preserveAspectRatio: Bool? {
        get { storage?.fields.preserveAspectRatio }
        set { mutate { $0.preserveAspectRatio = newValue } }
    }
    /// The image's scale factor; default: from an `@2x`/`@3x` suffix of the cache key, else 1.
    public var imageScaleFactor: Double? {
        get { storage?.fields.imageScaleFactor }
        set { mutate { $0.imageScaleFactor = newValue } }
    }
    /// The pixel budget for `.scaleDownLargeImages`, in bytes of RGBA pixels (default 60 MB).
    public var scaleDownLimitBytes: Int? {
        get { storage?.fields.scaleDownLimitBytes }
        set { mutate { $0.scaleDownLimitBytes = newValue } }
    }
    /// The largest canvas, in pixels, this load decodes (default
    /// `ImageDecodingOptions.defaultPixelLimit`, 100 megapixels): a larger image fails with
    /// `ImageError.tooLarge`, read from its header before any pixel is allocated. A service
    /// lowers it for what strangers send.
    public var decodePixelLimit: Int? {
        get { storage?.fields.decodePixelLimit }
        set { mutate { $0.decodePixelLimit = newValue } }
    }
    /// The colour space of the decoded pixels (default `.sRGB`: an image with another profile is
    /// converted). `.original` keeps the stored values and the profile; its images are cached
    /// under keys of their own (`-ColorSpace(original)`), so the two never mix.
    public var colorSpace: ImageColorSpace? {
        get { storage?.fields.colorSpace }
        set { mutate { $0.colorSpace = newValue } }
    }
    /// Where to look for the image (default `.all`).
    public var queryCacheType: ImageCacheType? {
        get { storage?.fields.queryCacheType }
        set { mutate { $0.queryCacheType = newValue } }
    }
    /// Where to store the loaded image (default `.all`).
    public var storeCacheType: ImageCacheType? {
        get { storage?.fields.storeCacheType }
        set { mutate { $0.storeCacheType = newValue } }
    }
    /// Where to look for the untransformed original when a transformed or thumbnail image is not
    /// cached (default `.disk`, as current SDWebImage 5.x): a hit is transformed instead of
    /// downloading again. `.none` never looks.
    public var originalQueryCacheType: ImageCacheType? {
        get { storage?.fields.originalQueryCacheType }
        set { mutate { $0.originalQueryCacheType = newValue } }
    }
    /// Where to store the original data when the image is transformed or a thumbnail (default `.disk`).
    public var originalStoreCacheType: ImageCacheType? {
        get { storage?.fields.originalStoreCacheType }
        set { mutate { $0.originalStoreCacheType = newValue } }
    }
    /// Turns a URL into its cache key (default: the absolute string).
    public var cacheKeyFilter: CacheKeyFilter? {
        get { storage?.fields.cacheKeyFilter }
        set { mutate { $0.cacheKeyFilter = newValue } }
    }
    /// Encodes a transformed image for the disk cache (default: its source format).
    public var cacheSerializer: CacheSerializer? {
        get { storage?.fields.cacheSerializer }
        set { mutate { $0.cacheSerializer = newValue } }
    }
    /// Changes or refuses the request (beats the loader's own modifier).
    public var requestModifier: RequestModifier? {
        get { storage?.fields.requestModifier }
        set { mutate { $0.requestModifier = newValue } }
    }
    /// Changes or refuses the request asynchronously, after `requestModifier` (an access token
    /// refreshed before sending; beats the loader's own). A call cancelled while it runs sends
    /// nothing.
    public var asyncRequestModifier: AsyncRequestModifier? {
        get { storage?.fields.asyncRequestModifier }
        set { mutate { $0.asyncRequestModifier = newValue } }
    }
    /// Inspects, rewrites or refuses the response (beats the loader's own modifier).
    public var responseModifier: ResponseModifier? {
        get { storage?.fields.responseModifier }
        set { mutate { $0.responseModifier = newValue } }
    }
    /// Turns downloaded bytes into image bytes (beats the loader's own decryptor).
    public var decryptor: Decryptor? {
        get { storage?.fields.decryptor }
        set { mutate { $0.decryptor = newValue } }
    }
    /// URLs tried in order when the image cannot be loaded from the asked URL (Kingfisher's
    /// `alternativeSources`): a failed download or an undecodable body, not a cancellation.
    /// The image is cached under the asked URL's key; `ImageResult.sourceURL` says which source
    /// served it. When every source fails, the asked URL's error is thrown. A call with
    /// alternative sources shares no work with other calls.
    public var alternativeSources: [URL]? {
        get { storage?.fields.alternativeSources }
        set { mutate { $0.alternativeSources = newValue } }
    }

    /// How a failed download is tried again; nil (the default): it is not.
    public var retryStrategy: RetryStrategy? {
        get { storage?.fields.retryStrategy }
        set { mutate { $0.retryStrategy = newValue } }
    }

    /// The longest a whole call may take (waiting in the loader's queue, the transfer, decoding;
    /// URLSession's resource timeout): past it the call fails with `ImageError.timedOut(url:)`,
    /// and the shared work goes on for its other callers (or stops, when there are none).
    /// Default: none; a stalled transfer still ends at the loader's timeout.
    public var loadTimeout: Duration? {
        get { storage?.fields.loadTimeout }
        set { mutate { $0.loadTimeout = newValue } }
    }
    /// Stall and total timeout of the download (default: the loader's).
    public var downloadTimeout: Duration? {
        get { storage?.fields.downloadTimeout }
        set { mutate { $0.downloadTimeout = newValue } }
    }
    /// The cache to use instead of the manager's.
    public var cache: (any ImageCaching)? {
        get { storage?.fields.cache }
        set { mutate { $0.cache = newValue } }
    }
    /// The loader to use instead of the manager's registry.
    public var loader: (any ImageLoader)? {
        get { storage?.fields.loader }
        set { mutate { $0.loader = newValue } }
    }
    /// The coder to decode with instead of the manager's registry.
    public var coder: (any ImageCoder)? {
        get { storage?.fields.coder }
        set { mutate { $0.coder = newValue } }
    }
    /// The shortest time between two progressive previews (default 0.1 s).
    public var previewInterval: Duration? {
        get { storage?.fields.previewInterval }
        set { mutate { $0.previewInterval = newValue } }
    }
    /// A priority the caller can change while the load runs (Nuke's `ImageTask.priority`
    /// setter); it beats `.highPriority` / `.lowPriority`. Set `value` on the handle later to
    /// move the load: a waiting transfer is reordered in the loader's queue. Calls sharing a
    /// load run at the highest priority among them.
    public var priority: LoadPriority? {
        get { storage?.fields.priority }
        set { mutate { $0.priority = newValue } }
    }
    /// Whether the disk cache follows the origin's caching headers (default
    /// `.respectHeaders`; see `HTTPCachePolicy`).
    public var httpCachePolicy: HTTPCachePolicy? {
        get { storage?.fields.httpCachePolicy }
        set { mutate { $0.httpCachePolicy = newValue } }
    }
    /// What the load writes to disk: original bytes, processed images, or both (default
    /// `.automatic`; see `DataCachePolicy`).
    public var dataCachePolicy: DataCachePolicy? {
        get { storage?.fields.dataCachePolicy }
        set { mutate { $0.dataCachePolicy = newValue } }
    }
    /// How an image stored without its bytes is encoded for disk: format, quality, a largest
    /// size (default: the image's own format at quality 0.9, no limit; see `CacheEncoding`).
    /// A `cacheSerializer` replaces it.
    public var cacheEncoding: CacheEncoding? {
        get { storage?.fields.cacheEncoding }
        set { mutate { $0.cacheEncoding = newValue } }
    }

    /// Steps around the call (see `ImageInterceptor`), inside the configuration's
    /// `interceptors`; a call's own list replaces the default context's. They do not keep a
    /// call from sharing work with others.
    public var interceptors: [any ImageInterceptor]? {
        get { storage?.fields.interceptors }
        set { mutate { $0.interceptors = newValue } }
    }
    /// Changes every image the call hands out, memory hits included, and is never stored (see
    /// `ImageModifier`). It does not keep a call from sharing work with others.
    public var imageModifier: ImageModifier? {
        get { storage?.fields.imageModifier }
        set { mutate { $0.imageModifier = newValue } }
    }

    /// Whether progressive previews are kept in the memory cache (Nuke's
    /// `isStoringPreviewsInMemoryCache`; default false): a later progressive load of the same
    /// key that misses memory shows the last one kept at once, as its first preview. A preview
    /// is kept under a key of its own, never where the final image is (`CacheKeys.previewKey`),
    /// and not at all once the final image is in memory. Needs a cache with synchronous memory.
    public var storesPreviewsInMemory: Bool? {
        get { storage?.fields.storesPreviewsInMemory }
        set { mutate { $0.storesPreviewsInMemory = newValue } }
    }
    /// The format the bytes are in, for bytes whose first bytes do not tell (SDWebImage's
    /// `imageTypeIdentifierHint`): the registry tries the coders that accept the data with this
    /// hint (`ImageCoder.canDecode(_:hint:)`) once none recognises it. In this process only: a
    /// registry with `isolation` sends its workers no hint.
    public var formatHint: ImageFormat? {
        get { storage?.fields.formatHint }
        set { mutate { $0.formatHint = newValue } }
    }

    /// How many bits a channel the decoded image keeps: 8 (nil, `.eight`) or the source's
    /// (`.source`: a 16-bit PNG, a 10-bit AVIF kept at 16; `ImageDecodingOptions.bitDepth`). A
    /// deep image is another image: its cache key is its own (`-BitDepth(source)`).
    public var bitDepth: ImageBitDepth? {
        get { storage?.fields.bitDepth }
        set { mutate { $0.bitDepth = newValue } }
    }

    /// What an HDR (PQ or HLG) image becomes: tone-mapped to SDR sRGB (nil, `.standard`) or
    /// kept as HDR, deep with its code points (`.high`; SDWebImage's `decodeToHDR`). A kept
    /// image is another image: its cache key is its own (`-DynamicRange(high)`).
    public var dynamicRange: ImageDynamicRange? {
        get { storage?.fields.dynamicRange }
        set { mutate { $0.dynamicRange = newValue } }
    }

    /// The page of a document of several (a PDF, through the `WebImagePDF` plug-in) to load,
    /// from 0 (SDWebImagePDFCoder draws the first). Another page is another image: its cache
    /// key and its shared load are its own (`ImageDecodingOptions.pageIndex`).
    public var pdfPageIndex: Int? {
        get { storage?.fields.pdfPageIndex }
        set { mutate { $0.pdfPageIndex = newValue } }
    }

    /// The cache the untransformed original of a transformed, thumbnail or filled image is
    /// queried in and stored to (SDWebImage's `SDWebImageContextOriginalImageCache`); nil: the
    /// call's cache. The transformed image stays in the call's cache.
    public var originalCache: (any ImageCaching)? {
        get { storage?.fields.originalCache }
        set { mutate { $0.originalCache = newValue } }
    }

    /// An empty context: every setting falls back to its default.
    public init() { storage = nil }

    /// A context with the most used fields set.
    public init(transformer: (any ImageTransformer)? = nil, thumbnailPixelSize: PixelSize? = nil,
                storeCacheType: ImageCacheType? = nil, cache: (any ImageCaching)? = nil, loader: (any ImageLoader)? = nil) {
        var fields = Fields()
        fields.transformer = transformer
        fields.thumbnailPixelSize = thumbnailPixelSize
        fields.storeCacheType = storeCacheType
        fields.cache = cache
        fields.loader = loader
        storage = Storage(fields)
    }

    /// A custom value, for keys defined by custom loaders, caches and coders.
    public subscript<Key: ImageContextKey>(key: Key.Type) -> Key.Value? {
        get { storage?.fields.custom[ObjectIdentifier(key)] as? Key.Value }
        set { mutate { $0.custom[ObjectIdentifier(key)] = newValue } }
    }

    private mutating func mutate(_ change: (inout Fields) -> Void) {
        if storage == nil {
            storage = Storage(Fields())
        } else if !isKnownUniquelyReferenced(&storage) {
            storage = Storage(storage!.fields)
        } else {
            storage!.version &+= 1   // what managers kept for the values before the change no longer holds
        }
        change(&storage!.fields)
        storage!.isEmpty = storage!.fields.isEmpty
    }

    /// This context with every nil field taken from `defaults`.
    func merged(over defaults: ImageContext) -> ImageContext {
        guard let mine = storage?.fields else { return defaults }
        guard let base = defaults.storage?.fields else { return self }
        var result = mine
        for field in Fields.table { field.fill(&result, base) }
        result.custom = base.custom.merging(mine.custom) { _, mine in mine }
        return ImageContext(storage: Storage(result))
    }

    private init(storage: Storage) { self.storage = storage }

    /// How many fields the values hold (`custom` aside), and how many of them the table that
    /// merging and emptiness read lists: equal unless a field was added without its entry.
    static var fieldCounts: (declared: Int, tabled: Int) {
        (Mirror(reflecting: Fields()).children.count - 1, Fields.table.count)
    }

    /// Whether this context was left entirely at its defaults (the common, fastest case).
    var isEmpty: Bool {
        storage?.isEmpty ?? true
    }

    /// Whether loads with this context can share work with other loads of the same key: false
    /// when it carries closures or value-type plug-ins that cannot be compared.
    var isShareable: Bool {
        guard let f = storage?.fields else { return true }
        return f.cacheKeyFilter == nil && f.cacheSerializer == nil && f.requestModifier == nil && f.asyncRequestModifier == nil
            && f.responseModifier == nil
            && f.decryptor == nil && f.custom.isEmpty && f.alternativeSources == nil
            && (f.cache.map { type(of: $0) is AnyClass } ?? true)
            && (f.originalCache.map { type(of: $0) is AnyClass } ?? true)
            && (f.loader.map { type(of: $0) is AnyClass } ?? true)
            && (f.coder.map { type(of: $0) is AnyClass } ?? true)
    }

    /// The fields themselves.
    private struct Fields: Sendable {
        var transformer: (any ImageTransformer)?
        var usesTransformer: Bool?
        var thumbnailPixelSize: PixelSize?
        var fillPixelSize: PixelSize?
        var fillAnchor: FillAnchor?
        var preserveAspectRatio: Bool?
        var imageScaleFactor: Double?
        var scaleDownLimitBytes: Int?
        var decodePixelLimit: Int?
        var colorSpace: ImageColorSpace?
        var queryCacheType: ImageCacheType?
        var storeCacheType: ImageCacheType?
        var originalQueryCacheType: ImageCacheType?
        var originalStoreCacheType: ImageCacheType?
        var cacheKeyFilter: CacheKeyFilter?
        var cacheSerializer: CacheSerializer?
        var requestModifier: RequestModifier?
        var asyncRequestModifier: AsyncRequestModifier?
        var responseModifier: ResponseModifier?
        var decryptor: Decryptor?
        var downloadTimeout: Duration?
        var loadTimeout: Duration?
        var retryStrategy: RetryStrategy?
        var alternativeSources: [URL]?
        var cache: (any ImageCaching)?
        var loader: (any ImageLoader)?
        var coder: (any ImageCoder)?
        var previewInterval: Duration?
        var priority: LoadPriority?
        var httpCachePolicy: HTTPCachePolicy?
        var dataCachePolicy: DataCachePolicy?
        var cacheEncoding: CacheEncoding?
        var interceptors: [any ImageInterceptor]?
        var imageModifier: ImageModifier?
        var storesPreviewsInMemory: Bool?
        var formatHint: ImageFormat?
        var pdfPageIndex: Int?
        var dynamicRange: ImageDynamicRange?
        var bitDepth: ImageBitDepth?
        var originalCache: (any ImageCaching)?
        var custom: [ObjectIdentifier: any Sendable] = [:]

        var isEmpty: Bool { custom.isEmpty && Self.table.allSatisfy { $0.isUnset(self) } }

        /// Every field above but `custom`, once: what merging and emptiness read. A new field is
        /// added here with its declaration (`ImageContextFieldTests` checks that none is missing).
        static let table: [Field] = [
            Field(\.transformer),
            Field(\.usesTransformer),
            Field(\.thumbnailPixelSize),
            Field(\.fillPixelSize),
            Field(\.fillAnchor),
            Field(\.preserveAspectRatio),
            Field(\.imageScaleFactor),
            Field(\.scaleDownLimitBytes),
            Field(\.decodePixelLimit),
            Field(\.colorSpace),
            Field(\.queryCacheType),
            Field(\.storeCacheType),
            Field(\.originalQueryCacheType),
            Field(\.originalStoreCacheType),
            Field(\.cacheKeyFilter),
            Field(\.cacheSerializer),
            Field(\.requestModifier),
            Field(\.asyncRequestModifier),
            Field(\.responseModifier),
            Field(\.decryptor),
            Field(\.downloadTimeout),
            Field(\.loadTimeout),
            Field(\.retryStrategy),
            Field(\.alternativeSources),
            Field(\.cache),
            Field(\.loader),
            Field(\.coder),
            Field(\.previewInterval),
            Field(\.priority),
            Field(\.httpCachePolicy),
            Field(\.dataCachePolicy),
            Field(\.cacheEncoding),
            Field(\.interceptors),
            Field(\.imageModifier),
            Field(\.storesPreviewsInMemory),
            Field(\.formatHint),
            Field(\.pdfPageIndex),
            Field(\.dynamicRange),
            Field(\.bitDepth),
            Field(\.originalCache),
        ]

        /// One optional field: whether it is set, and taking it from another context when not.
        struct Field: Sendable {
            let isUnset: @Sendable (Fields) -> Bool
            let fill: @Sendable (inout Fields, Fields) -> Void

            init<Value>(_ path: WritableKeyPath<Fields, Value?> & Sendable) {
                isUnset = { $0[keyPath: path] == nil }
                fill = { fields, base in
                    if fields[keyPath: path] == nil { fields[keyPath: path] = base[keyPath: path] }
                }
            }
        }
    }

    // Sendable by hand: `fields` is only changed through `mutate`, when this storage is
    // referenced by one context alone (copy on write); shared storage is never written.
    private final class Storage: @unchecked Sendable {
        var fields: Fields
        /// Whether every field is unset: asked several times a call, worked out once a change.
        var isEmpty: Bool
        /// Counts the changes made in place (when no other context shares these values).
        var version = 0
        /// The managers that keep settings for these values (held weakly): told when they go.
        private let owners = Mutex<[WeakOwner]>([])
        init(_ fields: Fields) {
            self.fields = fields
            isEmpty = fields.isEmpty
        }

        /// Notes that `owner` keeps settings for these values.
        func kept(by owner: ContextOwner) {
            owners.withLock { owners in
                owners.removeAll { $0.owner == nil }
                if !owners.contains(where: { $0.owner === owner }) { owners.append(WeakOwner(owner: owner)) }
            }
        }

        deinit {
            let id = ObjectIdentifier(self)
            for entry in owners.withLock({ $0 }) { entry.owner?.forget(id) }
        }
    }

    private struct WeakOwner {
        weak var owner: ContextOwner?
    }

    /// The settings of a call with this context, worked out by `make` (given a copy of this
    /// context) once per manager (`owner`), which keeps them by this context's values (see
    /// `ContextOwner`). They are made from a copy of the values, so that they do not hold the
    /// context they are kept for.
    func settings(for owner: ContextOwner, make: (ImageContext) -> (LoadRequest.Settings, Bool)) -> (LoadRequest.Settings, Bool) {
        guard let storage else { return make(self) }
        return owner.settings(for: storage, version: storage.version) {
            storage.kept(by: owner)
            return make(ImageContext(storage: Storage(storage.fields)))
        }
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

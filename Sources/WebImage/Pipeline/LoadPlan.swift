import Foundation

/// Everything one load decided before any work: the settings after merging (call context, then
/// the manager's defaults), the cache keys, the decode options, and the keys under which the
/// work is shared with other callers.
final class LoadPlan: Sendable {
    let url: URL
    let options: ImageOptions
    let context: ImageContext
    /// The final cache key (with thumbnail and transformer), nil when the key filter says not to cache.
    let cacheKey: String?
    /// The key of the untransformed, full-size image.
    let originalKey: String?
    let decodeOptions: ImageDecodingOptions
    let cache: any ImageCaching
    let loader: any ImageLoader
    let coders: ImageCoders
    /// Shares the decode-transform-store work.
    let workKey: WorkKey
    /// Shares the transfer.
    let downloadKey: DownloadKey

    init(url: URL, options: ImageOptions, context: ImageContext, cacheKey: String?, originalKey: String?,
         decodeOptions: ImageDecodingOptions, cache: any ImageCaching, loader: any ImageLoader, coders: ImageCoders,
         workKey: WorkKey, downloadKey: DownloadKey) {
        self.url = url
        self.options = options
        self.context = context
        self.cacheKey = cacheKey
        self.originalKey = originalKey
        self.decodeOptions = decodeOptions
        self.cache = cache
        self.loader = loader
        self.coders = coders
        self.workKey = workKey
        self.downloadKey = downloadKey
    }

    var queryType: ImageCacheType { context.queryCacheType ?? .all }
    var storeType: ImageCacheType { context.storeCacheType ?? .all }
    var originalQueryType: ImageCacheType { context.originalQueryCacheType ?? .none }
    var originalStoreType: ImageCacheType { context.originalStoreCacheType ?? .disk }
    var previewInterval: Duration { context.previewInterval ?? .milliseconds(100) }
    /// Whether the result differs from the plain full-size decode of the original.
    var isDerived: Bool { context.transformer != nil || context.thumbnailPixelSize != nil }
    /// Whether the decode may give less than the whole image (first frame only, scaled down)
    /// while the key is the plain one: such an image never goes into memory under that key,
    /// or a later plain call would get the reduced image.
    var decodeReducesPlainKey: Bool {
        !isDerived && (decodeOptions.firstFrameOnly || decodeOptions.maxPixelCount != nil || decodeOptions.maxPixelSize != nil)
    }
    /// Where this load's images may go in memory: nowhere for a reduced decode under the plain key.
    var memoryStoreType: ImageCacheType { decodeReducesPlainKey ? ImageCacheType(memory: false, disk: storeType.includesDisk) : storeType }

    /// The request sent to the loader.
    func loaderRequest(validators: CacheValidators?) -> ImageLoaderRequest {
        var request = ImageLoaderRequest(
            url: url, timeout: context.downloadTimeout,
            priority: options.contains(.highPriority) ? .high : options.contains(.lowPriority) ? .low : .normal,
            allowsInvalidCertificates: options.contains(.allowInvalidSSLCertificates),
            handlesCookies: options.contains(.handleCookies))
        request.requestModifier = context.requestModifier
        request.asyncRequestModifier = context.asyncRequestModifier
        request.responseModifier = context.responseModifier
        request.decryptor = context.decryptor
        if let validators {
            request.acceptsNotModified = true
            if let etag = validators.etag { request.headers["If-None-Match"] = etag }
            if let lastModified = validators.lastModified { request.headers["If-Modified-Since"] = lastModified }
        }
        return request
    }

    /// What makes two loads the same decode-transform-store work.
    struct WorkKey: Hashable, Sendable {
        let url: String
        let cacheKey: String?
        let decode: ImageDecodingOptions
        let options: UInt32
        let query: ImageCacheType, store: ImageCacheType, originalQuery: ImageCacheType, originalStore: ImageCacheType
        let stretches: Bool
        let cacheID: ObjectIdentifier?, loaderID: ObjectIdentifier?, coderID: ObjectIdentifier?
        /// Set for loads that must not be shared.
        let unique: UUID?

        /// The URL, the options and the uniqueness only: every caller of a shared load hashes
        /// its key, and works for one URL that differ in the rest are few (equality still
        /// compares every field).
        func hash(into hasher: inout Hasher) {
            hasher.combine(url)
            hasher.combine(options)
            hasher.combine(unique)
        }
    }

    /// What makes two loads the same transfer.
    struct DownloadKey: Hashable, Sendable {
        let url: String
        let cookies: Bool
        let invalidCertificates: Bool
        let timeout: Duration?
        let conditional: Bool
        let loader: ObjectIdentifier?
        let unique: UUID?
    }
}

/// The identity of a plug-in when it is a class instance.
func instanceIdentity(_ value: Any?) -> ObjectIdentifier? {
    guard let value, type(of: value) is AnyClass else { return nil }
    return ObjectIdentifier(value as AnyObject)
}

/// HTTP validators kept beside a cached image so that `.refreshCached` can ask the server
/// whether it changed (a 304 keeps the cached image).
struct CacheValidators: Sendable, Equatable {
    var etag: String?
    var lastModified: String?

    init?(etag: String?, lastModified: String?) {
        guard etag != nil || lastModified != nil else { return nil }
        self.etag = etag
        self.lastModified = lastModified
    }

    /// From a response's headers (lowercase names).
    init?(headers: [String: String]) {
        self.init(etag: headers["etag"], lastModified: headers["last-modified"])
    }

    /// Stored as two lines: the ETag and the Last-Modified date (either may be empty).
    init?(stored: Data) {
        let lines = String(decoding: stored, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 3, lines[0] == "webimage-validators" else { return nil }
        self.init(etag: lines[1].isEmpty ? nil : String(lines[1]), lastModified: lines[2].isEmpty ? nil : String(lines[2]))
    }

    var stored: Data { Data("webimage-validators\n\(etag ?? "")\n\(lastModified ?? "")".utf8) }
}

/// A call that passed its synchronous checks and did not join work in flight: what it needs to
/// ask the memory cache and, on a miss, to make its `LoadPlan`. A class, so that the async
/// functions that hold it keep small frames.
final class PreparedLoad: Sendable {
    let url: URL
    let string: String
    let options: ImageOptions
    let context: ImageContext
    let keys: (original: String?, final: String?)
    let decode: ImageDecodingOptions
    let cache: any ImageCaching
    let workKey: LoadPlan.WorkKey
    let unique: UUID?
    /// Whether the memory cache is asked (and work in flight could have been joined).
    let queriesMemory: Bool

    init(url: URL, string: String, options: ImageOptions, context: ImageContext, keys: (original: String?, final: String?),
         decode: ImageDecodingOptions, cache: any ImageCaching, workKey: LoadPlan.WorkKey, unique: UUID?, queriesMemory: Bool) {
        self.url = url
        self.string = string
        self.options = options
        self.context = context
        self.keys = keys
        self.decode = decode
        self.cache = cache
        self.workKey = workKey
        self.unique = unique
        self.queriesMemory = queriesMemory
    }
}

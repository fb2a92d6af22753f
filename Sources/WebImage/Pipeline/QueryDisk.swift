import Foundation

/// Stage 2, the disk cache (the manager asked memory already): a fresh hit ends the work; with
/// `.refreshCached`, or when the origin's headers make it stale, the hit is kept to revalidate
/// (and, refreshing, to show first); a transformed or thumbnail image that is missing can be
/// made from the cached original.
extension ImagePipeline {
    /// What the disk query decided.
    enum DiskQuery {
        /// The work's result, from the disk (or from the cached original).
        case hit(SharedResult)
        /// Go on to the loader; `cached` is the entry to revalidate (`.refreshCached`, or stale);
        /// `original`, for a derived image that is not cached, its stale original to revalidate.
        case miss(cached: ImageCacheResult?, original: StaleOriginal? = nil)
    }

    /// The cached original of a derived (thumbnail or transformed) image, stale: the load sends
    /// its validators, and on a 304 makes its image from it (`notModified(_:original:...)`).
    struct StaleOriginal: Sendable {
        let hit: ImageCacheResult
        let key: String
    }

    /// With `.respectHeaders` the entry's freshness comes in the same trip as its data: a fresh
    /// hit is used (and only then put into memory), a stale one within `stale-while-revalidate`
    /// is used and revalidated in the background, any other stale one is revalidated first (a
    /// miss carrying it), and one made for other request headers (`Vary`) is a plain miss.
    func queryDisk(_ request: LoadRequest, loader: any ImageLoader, coders: ImageCoders) async throws -> DiskQuery {
        let options = request.options
        guard request.queriesDisk, let key = request.cacheKey else { return .miss(cached: nil) }
        try Task.checkCancellation()
        let refreshing = options.contains(.refreshCached)
        let checksFreshness = request.settings.respectsHTTPHeaders && !refreshing
        let scope: ImageCacheType = refreshing ? request.queryType : (request.queryType.includesDisk ? .disk : .none)
        var cached: ImageCacheResult?
        if scope != .none {
            // The validators (and the freshness) come in the same trip as the entry. An entry
            // whose freshness is checked goes into memory only once it is known fresh.
            let storeType = checksFreshness ? ImageCacheType(memory: false, disk: request.memoryStoreType.includesDisk) : request.memoryStoreType
            cached = await queryCache(request, key: key, query: ImageCacheQuery(
                scope: scope, options: request.decodeOptions, includingData: options.contains(.queryMemoryData),
                storeType: storeType, includingExtendedData: refreshing || checksFreshness))
        }
        if let cached, !refreshing {
            var result = ImageResult(cached, url: request.url)
            if checksFreshness {
                switch verdict(on: cached.extendedData, request, loader: loader,
                               revalidateInBackground: { revalidateInBackground(request, loader: loader, coders: coders) }) {
                case .use(let metadata):
                    // Into memory for as long as the entry stays fresh (a stale one not at all).
                    let (freshness, lifetime) = memoryTerms(metadata, request)
                    result.freshness = freshness
                    _ = await storeInMemory(request, image: cached.image, lifetime: lifetime)
                case .revalidate: return .miss(cached: cached)
                case .ignore: return .miss(cached: nil)
                }
            }
            return .hit(SharedResult(result))
        }
        if cached == nil, !refreshing {
            switch try await fromCachedOriginal(request, loader: loader, coders: coders) {
            case .made(let result)?: return .hit(SharedResult(result))
            case .stale(let original)?: return .miss(cached: nil, original: original)
            case nil: break
            }
        }
        return .miss(cached: cached)
    }

    /// What the cached original gives a derived image that is not cached.
    enum FromOriginal {
        /// The image, made from a fresh original.
        case made(ImageResult)
        /// The original is stale: it is revalidated before use.
        case stale(StaleOriginal)
    }

    /// A transformed or thumbnail image that is not cached, made from the cached original
    /// (when `originalQueryCacheType` asks to look for it). With `.respectHeaders` only a fresh
    /// original is used, and the image made from it keeps the original's freshness; a stale one
    /// (past `stale-while-revalidate` too, or within it: a derived image waits for the answer)
    /// is handed back to be revalidated.
    func fromCachedOriginal(_ request: LoadRequest, loader: any ImageLoader, coders: ImageCoders) async throws -> FromOriginal? {
        guard request.isDerived, request.originalQueryType != .none, let originalKey = request.originalKey else { return nil }
        // The original is promoted only as its own store type allows (disk by default): a
        // thumbnail or transformed load never puts the full-size image in memory. When it is
        // not promoted, it is decoded at the size the load needs (DCT scaling), as a download is.
        var options = request.decodeOptions
        if request.originalStoreType.includesMemory {
            options.maxPixelSize = nil
            options.fillSize = nil
            options.fillAnchor = nil
        }
        // A load that downloaded this original may still be writing it: after that write, it is
        // on disk (not downloaded a second time).
        await pendingStores.wait(forKey: originalKey)
        // Through the cache's shared queries: works of other sizes or transformers of the same
        // original read and decode it once.
        let checksFreshness = request.settings.respectsHTTPHeaders
        var query = ImageCacheQuery(scope: request.originalQueryType, options: options, storeType: request.originalStoreType,
                                    includingExtendedData: checksFreshness)
        query.context = request.context
        guard let hit = await request.settings.originalCache.image(forKey: originalKey, query: query) else { return nil }
        let metadata = hit.extendedData.flatMap(CacheEntryMetadata.init(stored:))
        if checksFreshness {
            switch use(of: metadata, request, loader: loader) {
            case .fresh: break
            case .revalidate, .staleWhileRevalidate: return .stale(StaleOriginal(hit: hit, key: originalKey))
            case .otherVariant: return nil
            }
        }
        try Task.checkCancellation()
        return .made(try await derived(request, from: hit, metadata: metadata, stored: hit.extendedData, coders: coders))
    }

    /// The derived image of `request` made from its cached original `hit` (whose entry's
    /// metadata is `metadata`, stored as `stored`): into memory for the original's freshness, and
    /// to disk as the request's store types say.
    func derived(_ request: LoadRequest, from hit: ImageCacheResult, metadata: CacheEntryMetadata?, stored: Data?,
                 coders: ImageCoders) async throws -> ImageResult {
        let image = try transform(thumbnail(hit.image, request: request), request: request)
        let (freshness, lifetime) = memoryTerms(metadata, request)
        _ = await storeInMemory(request, image: image, lifetime: lifetime)
        let failure = await storeOnDisk(request, original: hit.image, image: image, data: nil, derived: true, coders: coders,
                                        metadata: .stored(stored), storesOriginal: false)
        var result = ImageResult(image: image, data: nil, cacheType: hit.cacheType, url: request.url)
        result.storeFailure = failure
        result.freshness = freshness
        return result
    }

    /// The request's cache asked for the load's own key, read and decoded in this load's task:
    /// the load's work already shares every caller of that key, a shared query would only add
    /// a task and a work of its own.
    private func queryCache(_ request: LoadRequest, key: String, query: ImageCacheQuery) async -> ImageCacheResult? {
        var query = query
        query.sharesConcurrentReads = false
        query.context = request.context
        return await request.cache.image(forKey: key, query: query)
    }
}

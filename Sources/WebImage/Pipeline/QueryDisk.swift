import Foundation

/// Stage 2, the disk cache (the manager asked memory already): a hit ends the work; with
/// `.refreshCached` the hit is kept to show first and to revalidate; a transformed or thumbnail
/// image that is missing can be made from the cached original.
extension ImagePipeline {
    /// What the disk query decided.
    enum DiskQuery {
        /// The work's result, from the disk (or from the cached original).
        case hit(SharedResult)
        /// Go on to the loader; `cached` is the entry to revalidate with `.refreshCached`.
        case miss(cached: ImageCacheResult?)
    }

    func queryDisk(_ request: LoadRequest) async throws -> DiskQuery {
        let options = request.options
        guard let key = request.cacheKey, !options.contains(.fromLoaderOnly) else { return .miss(cached: nil) }
        try Task.checkCancellation()
        let scope: ImageCacheType = options.contains(.refreshCached) ? request.queryType
            : (request.queryType.includesDisk ? .disk : .none)
        var cached: ImageCacheResult?
        if scope != .none {
            // With .refreshCached the validators come in the same trip as the entry.
            cached = await queryCache(request, key: key, query: ImageCacheQuery(
                scope: scope, options: request.decodeOptions, includingData: options.contains(.queryMemoryData),
                storeType: request.memoryStoreType, includingExtendedData: options.contains(.refreshCached)))
        }
        if let cached, !options.contains(.refreshCached) {
            return .hit(SharedResult(ImageResult(cached, url: request.url)))
        }
        if cached == nil, !options.contains(.refreshCached), let result = try await fromCachedOriginal(request) {
            return .hit(SharedResult(result))
        }
        return .miss(cached: cached)
    }

    /// A transformed or thumbnail image that is not cached, made from the cached original
    /// (when `originalQueryCacheType` asks to look for it).
    func fromCachedOriginal(_ request: LoadRequest) async throws -> ImageResult? {
        guard request.isDerived, request.originalQueryType != .none, let originalKey = request.originalKey else { return nil }
        // The original is promoted only as its own store type allows (disk by default): a
        // thumbnail or transformed load never puts the full-size image in memory. When it is
        // not promoted, it is decoded at the size the load needs (DCT scaling), as a download is.
        var options = request.decodeOptions
        if request.originalStoreType.includesMemory {
            options.maxPixelSize = nil
            options.fillSize = nil
        }
        // A load that downloaded this original may still be writing it: after that write, it is
        // on disk (not downloaded a second time).
        await pendingStores.wait(forKey: originalKey)
        // Through the cache's shared queries: works of other sizes or transformers of the same
        // original read and decode it once.
        var query = ImageCacheQuery(scope: request.originalQueryType, options: options, storeType: request.originalStoreType)
        query.context = request.context
        guard let hit = await request.cache.image(forKey: originalKey, query: query) else { return nil }
        try Task.checkCancellation()
        let image = try transform(thumbnail(hit.image, request: request), request: request)
        _ = await storeInMemory(request, image: image)
        let failure = await storeOnDisk(request, original: hit.image, image: image, data: nil, derived: true, validators: nil,
                                        storesOriginal: false)
        var result = ImageResult(image: image, data: nil, cacheType: hit.cacheType, url: request.url)
        result.storeFailure = failure
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

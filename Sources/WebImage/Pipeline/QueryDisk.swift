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

    func queryDisk(_ plan: LoadPlan) async throws -> DiskQuery {
        let options = plan.options
        guard let key = plan.cacheKey, !options.contains(.fromLoaderOnly) else { return .miss(cached: nil) }
        try Task.checkCancellation()
        let scope: ImageCacheType = options.contains(.refreshCached) ? plan.queryType
            : (plan.queryType.includesDisk ? .disk : .none)
        var cached: ImageCacheResult?
        if scope != .none {
            // With .refreshCached the validators come in the same trip as the entry.
            cached = await plan.cache.image(forKey: key, query: ImageCacheQuery(
                scope: scope, options: plan.decodeOptions, includingData: options.contains(.queryMemoryData),
                storeType: plan.memoryStoreType, includingExtendedData: options.contains(.refreshCached)))
        }
        if let cached, !options.contains(.refreshCached) {
            return .hit(SharedResult(ImageResult(cached, url: plan.url)))
        }
        if cached == nil, !options.contains(.refreshCached), let result = try await fromCachedOriginal(plan) {
            return .hit(SharedResult(result))
        }
        return .miss(cached: cached)
    }

    /// A transformed or thumbnail image that is not cached, made from the cached original
    /// (when `originalQueryCacheType` asks to look for it).
    func fromCachedOriginal(_ plan: LoadPlan) async throws -> ImageResult? {
        guard plan.isDerived, plan.originalQueryType != .none, let originalKey = plan.originalKey else { return nil }
        var fullSize = plan.decodeOptions
        fullSize.maxPixelSize = nil
        // The original is promoted only as its own store type allows (disk by default): a
        // thumbnail or transformed load never puts the full-size image in memory.
        guard let hit = await plan.cache.image(forKey: originalKey, query: ImageCacheQuery(
            scope: plan.originalQueryType, options: fullSize, storeType: plan.originalStoreType)) else { return nil }
        try Task.checkCancellation()
        let image = try transform(thumbnail(hit.image, plan: plan), plan: plan)
        await store(plan, original: hit.image, image: image, data: nil, derived: true, validators: nil, storesOriginal: false)
        return ImageResult(image: image, data: nil, cacheType: hit.cacheType, url: plan.url)
    }
}

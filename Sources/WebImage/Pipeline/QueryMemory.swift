import Foundation

/// Stage 1, the memory cache: asked by the caller itself, before any shared work (a hit costs
/// one actor hop and no task).
extension ImageManager {
    /// The memory hit for a call, or nil. With `.queryMemoryData` the hit's data is
    /// read from disk too. Decode options are part of what a hit must match: a first-frame call
    /// on an animated hit gets a still.
    /// Inlined into the caller: on the hot path every async call level costs its own frame.
    @inline(__always)
    func queryMemory(_ request: LoadRequest) async -> ImageResult? {
        guard let key = request.cacheKey else { return nil }
        let options = request.options
        let wantsData = options.contains(.queryMemoryData)
        let query = ImageCacheQuery(scope: wantsData ? request.queryType : .memory, options: request.decodeOptions,
                                    includingData: wantsData)
        guard var hit = await request.cache.image(forKey: key, query: query) else { return nil }
        if options.contains(.retryFailed) { failedURLs.remove(request.url) }
        if request.decodeOptions.firstFrameOnly, hit.image.isAnimated {
            hit.image = Image(bitmap: hit.image.bitmap, format: hit.image.format, scale: hit.image.scale)
        }
        return ImageResult(hit, url: request.url)
    }
}

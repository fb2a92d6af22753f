import Foundation

/// The previews of a progressive load kept in the memory cache (`ImageContext.storesPreviewsInMemory`,
/// Nuke's `isStoringPreviewsInMemoryCache`), under the preview key of the load's cache key
/// (`CacheKeys.previewKey`), never the final image's: a preview is kept only while the final
/// image is not in memory, and a load that misses memory starts with the last one kept.
struct KeptPreviews {
    private let cache: any ImageCaching
    private let key: String
    private let previewKey: String

    /// The kept previews of `request`; nil when it keeps none (not asked, no cache key, no
    /// memory store, or a cache that cannot store in memory without suspending).
    init?(_ request: LoadRequest) {
        guard request.settings.storesPreviews, let key = request.cacheKey, request.memoryStoreType.includesMemory,
              request.settings.hasSynchronousMemory else { return nil }
        cache = request.cache
        self.key = key
        previewKey = CacheKeys.previewKey(for: key)
    }

    /// The last preview kept, as a preview whose rows all hold data; nil when there is none or
    /// the final image is in memory.
    func last() -> PartialImage? {
        guard cache.cachedImage(forKey: key) == nil, let image = cache.cachedImage(forKey: previewKey) else { return nil }
        return PartialImage(image: image, rowsDecoded: image.height, scans: 0)
    }

    /// Keeps `preview`, unless the final image is in memory.
    func keep(_ preview: PartialImage) {
        guard cache.cachedImage(forKey: key) == nil else { return }
        _ = cache.storeInMemoryNow(preview.image, forKey: previewKey)
    }
}

import Foundation
import Synchronization

/// The origin's caching rules at the disk stage (`HTTPCachePolicy.respectHeaders`): whether a
/// disk hit may be used as it is, what an arriving response stores beside its bytes, how a 304
/// refreshes an entry, and the one background revalidation of a `stale-while-revalidate` hit.
extension ImagePipeline {
    /// How `request` may use a disk entry whose metadata is `metadata`. An entry with no
    /// metadata (written by another program, or before freshness was kept) is fresh.
    func use(of metadata: CacheEntryMetadata?, _ request: LoadRequest, loader: any ImageLoader) -> CacheEntryMetadata.Use {
        guard let metadata else { return .fresh }
        let headers = metadata.vary.isEmpty && !metadata.variesOnEverything
            ? [:] : loader.requestHeaders(for: request.loaderRequest(validators: nil))
        return metadata.use(at: now(), requestHeaders: headers)
    }

    /// The freshness a result made from an entry with `metadata` carries, and how long its
    /// image may stay in memory; neither under `.ignoreHeaders`.
    func memoryTerms(_ metadata: CacheEntryMetadata?, _ request: LoadRequest) -> (freshness: HTTPFreshness?, lifetime: Duration?) {
        guard request.settings.respectsHTTPHeaders, let metadata else { return (nil, nil) }
        let now = now()
        return (metadata.freshness(at: now), metadata.memoryLifetime(at: now))
    }

    /// The metadata stored with a response's bytes, and whether they may go to disk at all
    /// (under `.ignoreHeaders` always).
    func metadata(of response: ImageLoaderResponse, _ request: LoadRequest, loader: any ImageLoader) -> (CacheEntryMetadata, storable: Bool) {
        let varies = response.headers["vary"] != nil
        let headers = varies ? loader.requestHeaders(for: request.loaderRequest(validators: nil)) : [:]
        let metadata = CacheEntryMetadata(headers: response.headers, requestHeaders: headers, now: now())
        let storable = !request.settings.respectsHTTPHeaders || metadata.isStorable(modifiesRequests: request.settings.modifiesRequests)
        return (metadata, storable)
    }

    /// After a 304 answered the revalidation of the entry under `key` (whose metadata was
    /// `stored`): the entry's freshness refreshed from the 304's headers, written in the
    /// background (or before returning with `.waitStoreCache`). The body stays.
    /// Returns the refreshed metadata.
    @discardableResult
    func refreshEntry(_ key: String, stored: Data?, notModified response: ImageLoaderResponse, _ request: LoadRequest) async
        -> CacheEntryMetadata {
        let base = stored.flatMap(CacheEntryMetadata.init(stored:))
            ?? CacheEntryMetadata(headers: [:], requestHeaders: [:], now: now())
        let refreshed = base.refreshed(by: response.headers, now: now())
        let cache = request.cache, updated = refreshed.stored
        let write: @Sendable () async -> Void = { await cache.setExtendedData(updated, forKey: key) }
        if request.options.contains(.waitStoreCache) { await write() } else { pendingStores.start(write) }
        return refreshed
    }

    /// Revalidates `request`'s entry in the background, once per cache key at a time: a work of
    /// its own that sends the stored validators (`.refreshCached`), stores a changed image, or
    /// refreshes the entry's freshness on a 304. Its failure is logged; the callers already have
    /// the stale image.
    func revalidateInBackground(_ request: LoadRequest, loader: any ImageLoader, coders: ImageCoders) {
        guard let key = request.cacheKey, revalidating.begin(key) else { return }
        let refresh = LoadRequest(url: request.url, urlString: request.urlString,
                                  options: request.options.union(.refreshCached).subtracting([.waitStoreCache, .highPriority]).union(.lowPriority),
                                  settings: request.settings, isShareable: request.isShareable)
        let pipeline = self
        Task.detached(priority: .utility) {
            defer { pipeline.revalidating.end(key) }
            let (work, id, _) = pipeline.works.join(WorkKey(refresh), priority: .low, taskPriority: .utility, onEvent: nil) { work in
                try await pipeline.load(refresh, loader: loader, coders: coders, work: work, trace: nil)
            }
            do {
                let shared = try await work.wait(id)
                shared.pickedUp()
                pipeline.events.send(.loadFinished(refresh.url, source: shared.result.cacheType))
            } catch {
                pipeline.events.send(.loadFailed(refresh.url, error: error))
                ImagePipeline.logger.debug("[WebImage] background revalidation of \(refresh.urlString) failed: \(error)")
            }
        }
    }
}

/// The cache keys whose background revalidation is running.
final class BackgroundRevalidations: Sendable {
    private let keys = Mutex<Set<String>>([])

    /// Marks `key` as being revalidated; false when it already is.
    func begin(_ key: String) -> Bool { keys.withLock { $0.insert(key).inserted } }

    /// `key`'s revalidation ended.
    func end(_ key: String) { _ = keys.withLock { $0.remove(key) } }

    /// How many are running (for tests).
    var count: Int { keys.withLock { $0.count } }
}

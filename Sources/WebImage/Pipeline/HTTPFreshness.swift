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

    /// What a load does with a disk entry, by the origin's rules.
    enum EntryVerdict {
        /// Use it (fresh, or stale within `stale-while-revalidate`); its metadata, if any.
        case use(CacheEntryMetadata?)
        /// Revalidate it before use.
        case revalidate
        /// Not this request's entry (made for other request headers): a miss.
        case ignore
    }

    /// The rule for a disk hit, the same for an image's entry and a data load's bytes: a fresh
    /// entry is used; a stale one within `stale-while-revalidate` is used too, and
    /// `revalidateInBackground` starts its revalidation; any other stale one is revalidated
    /// first; one made for other request headers (`Vary`) is ignored. `stored` is the entry's
    /// stored metadata. Out of line: inlined, its temporaries sized the async frame of the disk
    /// stage (Benchmarks/README.md, "The `@inline` attributes that remain").
    @inline(never)
    func verdict(on stored: Data?, _ request: LoadRequest, loader: any ImageLoader,
                 revalidateInBackground: () -> Void) -> EntryVerdict {
        let metadata = stored.flatMap(CacheEntryMetadata.init(stored:))
        switch use(of: metadata, request, loader: loader) {
        case .fresh: return .use(metadata)
        case .staleWhileRevalidate:
            revalidateInBackground()
            return .use(metadata)
        case .revalidate: return .revalidate
        case .otherVariant: return .ignore
        }
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
        let metadata = CacheEntryMetadata(headers: response.headers, requestHeaders: headers, now: now(), shared: request.settings.isSharedCache)
        let storable = !request.settings.respectsHTTPHeaders || metadata.isStorable(modifiesRequests: request.settings.modifiesRequests)
        return (metadata, storable)
    }

    /// After a 304 answered the revalidation of the entry under `key` (whose metadata was
    /// `stored`): the entry's freshness refreshed from the 304's headers, written in the
    /// background (or before returning with `.waitStoreCache`). The body stays.
    /// Returns the refreshed metadata.
    @discardableResult
    func refreshEntry(_ key: String, in cache: (any ImageCaching)? = nil, stored: Data?, notModified response: ImageLoaderResponse,
                      _ request: LoadRequest) async -> CacheEntryMetadata {
        let base = stored.flatMap(CacheEntryMetadata.init(stored:))
            ?? CacheEntryMetadata(headers: [:], requestHeaders: [:], now: now(), shared: request.settings.isSharedCache)
        let refreshed = base.refreshed(by: response.headers, now: now())
        let cache = cache ?? request.cache, updated = refreshed.stored
        let write: @Sendable () async -> Void = { await cache.setExtendedData(updated, forKey: key) }
        if request.options.contains(.waitStoreCache) { await write() } else { pendingStores.start(write) }
        return refreshed
    }

    /// Revalidates `request`'s entry in the background, once per cache key at a time: a work of
    /// its own that sends the stored validators (`.refreshCached`), stores a changed image, or
    /// refreshes the entry's freshness on a 304. Its failure is logged; the callers already have
    /// the stale image.
    func revalidateInBackground(_ request: LoadRequest, loader: any ImageLoader, coders: ImageCoders) {
        guard let key = request.cacheKey else { return }
        let refresh = request.refreshing
        inBackground("image " + key, url: refresh.url, table: works, WorkKey(refresh)) { work in
            try await self.load(refresh, loader: loader, coders: coders, work: work, trace: nil)
        }
    }

    /// The same for a data load's entry (`ImageManager.data(for:)`): the bytes revalidated and
    /// stored, never decoded.
    func revalidateDataInBackground(_ request: LoadRequest, loader: any ImageLoader) {
        guard let key = request.originalKey else { return }
        let refresh = request.refreshing
        inBackground("data " + key, url: refresh.url, table: dataLoads, DataKey(refresh)) { work in
            try await self.loadData(refresh, loader: loader, work: work, tracing: false)
        }
    }

    /// Runs `body` as the shared work of `workKey` in `table`, in a task of its own at low
    /// priority, unless a background revalidation of `key` is running; its output is taken
    /// as a caller takes it, and the lifecycle watchers are told how it ended.
    private func inBackground<Key: Hashable & Sendable, Event: Sendable, Output: LoadOutput>(
        _ key: String, url: URL, table: InFlightTable<Key, Event, Output>, _ workKey: Key,
        body: @escaping @Sendable (SharedWork<Event, Output>) async throws -> Output) {
        guard revalidating.begin(key) else { return }
        let (revalidating, events) = (self.revalidating, self.events)
        Task.detached(priority: .utility) {
            defer { revalidating.end(key) }
            let (work, id, _) = table.join(workKey, priority: .low, taskPriority: .utility, onEvent: nil, body: body)
            do {
                let output = try await work.wait(id)
                output.pickedUp()
                events.send(.loadFinished(url, source: output.source))
            } catch {
                events.send(.loadFailed(url, error: error))
                ImagePipeline.logger.debug("[WebImage] background revalidation of \(url.absoluteString) failed: \(error)")
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

import Foundation

/// The original bytes of a URL, without decoding (Nuke's `ImagePipeline.data(for:)`): the
/// disk cache, then the loader, then the disk store, as the image stages do them.
extension ImageManager {
    /// The bytes at `url` as the server sent them (after the context's decryptor), not decoded:
    /// from the disk cache under the original's key (the key filter's; transformer and
    /// thumbnail do not apply), else downloaded and stored on disk (in the background unless
    /// `.waitStoreCache`). Callers of the same URL share one load, and the transfer is shared
    /// with image loads of that URL in flight. Honours `.fromCacheOnly`, `.fromLoaderOnly`,
    /// `.refreshCached` (revalidated with the stored validators; a 304 gives the cached bytes),
    /// `.retryFailed`, the failed-URL list, `shouldDownload`, the cache types of the context,
    /// priorities and `maximumConcurrentLoads`.
    /// - Throws: `ImageError` (`invalidURL`, `blacklistedURL`, `notInCache`, a loader error, ...)
    ///   or `CancellationError`.
    public func data(for url: URL, options: ImageOptions = [], context: ImageContext = .init()) async throws -> Data {
        try await loadedData(for: url, options: options, context: context).data
    }

    /// `data(for:options:context:)` with the origin's caching rules for the bytes (under a
    /// policy that follows them): a server that keeps results made from them learns whether the
    /// bytes are still the ones it used (their validators) and for how long, revalidating a
    /// stale disk entry with one conditional request.
    package func dataWithFreshness(for url: URL, options: ImageOptions = [], context: ImageContext = .init()) async throws
        -> (data: Data, freshness: HTTPFreshness?) {
        let loaded = try await loadedData(for: url, options: options, context: context)
        return (loaded.data, loaded.freshness)
    }

    /// `data(for:options:context:)` with where the bytes came from and, with `.waitStoreCache`,
    /// why their disk store failed (the prefetcher's disk-only destination).
    func loadedData(for url: URL, options: ImageOptions, context: ImageContext) async throws -> LoadedData {
        // The decision and the wait of the image calls (`decide`, `waitOn`); a data load has no
        // memory hit and no plain template.
        let (work, id, request) = try accounted(url) {
            try Task.checkCancellation()
            let request = try checkedRequest(url, url.absoluteString, options: options, context: context)
            return subscribeData(request, loader: try self.loader(for: request))
        }
        return try await waitOn(work, id, request, context: context)
    }

    /// Joins or starts the data load of `request` (one per `DataKey`): the work and this
    /// caller's subscription to it.
    private func subscribeData(_ request: LoadRequest, loader: any ImageLoader) -> (SharedWork<Never, LoadedData>, Int, LoadRequest) {
        let pipeline = self.pipeline
        let trace = WorkSpans.creatorContext()
        let (work, id, isNew) = pipeline.dataLoads.join(DataKey(request), priority: request.callerPriority, taskPriority: Task.currentPriority,
                                                     lifo: loader.capabilities.contains(.startsNewestFirst), onEvent: nil) { work in
            try await pipeline.spans.traced(request, work: work, parent: trace) { tracing in
                try await pipeline.loadData(request, loader: loader, work: work, tracing: tracing)
            }
        }
        followPriority(of: request, in: work, id: id)
        if !isNew { pipeline.spans.joined(work) }
        return (work, id, request)
    }
}

/// The bytes of a data load and where they came from (`.disk` or `.none` for the loader).
struct LoadedData: LoadOutput {
    var data: Data
    var source: ImageCacheType
    /// Why the disk store failed, when the load waited for it (`.waitStoreCache`).
    var storeFailure: ImageError?
    /// The origin's caching rules for the bytes, when the load follows them.
    var freshness: HTTPFreshness?

    var byteCount: Int? { data.count }
    /// Bytes are not counted when taken: no data load waits for its callers.
    func pickedUp() {}
}

extension ImagePipeline {
    /// The shared work of a data load: the image load's plan, stopped after the fetch. Its
    /// rules are the image stages' own: the disk entry's verdict (`verdict(on:)`), what ends a
    /// load before its transfer (`endsWithoutTransfer`), the transfer shared with image loads
    /// (`fetchBytes`), the answer's 304 and empty-body rules (`Download.isNotModified`), and the
    /// disk write (`scheduledDiskWrite`). The disk query and the transfer are in spans of their
    /// own when `tracing`, as an image load's.
    func loadData(_ request: LoadRequest, loader: any ImageLoader, work: SharedWork<Never, LoadedData>,
                  tracing: Bool) async throws -> LoadedData {
        events.send(.loadStarted(request.url))
        // 2. Disk: the original's bytes.
        var cached: CachedBytes?
        if request.queriesDisk, request.queryType.includesDisk {
            switch try await traceStage("webimage.disk", tracing, { await queryDiskBytes(request, loader: loader) }) {
            case .hit(let loaded): return loaded
            case .miss(let entry): cached = entry
            }
        }
        if let ended = try endsWithoutTransfer(request, cached: cached, key: request.originalKey) {
            return LoadedData(data: ended.data, source: .disk)
        }
        try Task.checkCancellation()
        // 3. Fetch, then stop: no decode waits for these bytes.
        let download = try await traceStage("webimage.download", tracing) {
            try await fetchBytes(request, loader: loader, validators: cached?.validators, priority: work.priority)
        }
        download.response.backlogClaim?.release()
        if try download.isNotModified(revalidating: cached != nil, request), let cached {
            return await notModified(request, cached: cached, response: download.response)
        }
        try Task.checkCancellation()
        // 6. Store.
        return await storeBytes(request, download: download, loader: loader)
    }

    /// A data load's disk entry: its bytes, and the metadata stored beside them.
    struct CachedBytes: Sendable {
        let data: Data
        let stored: Data?
        /// Its validators, to revalidate it.
        var validators: CacheValidators? { stored.flatMap(CacheEntryMetadata.init(stored:))?.validators }
    }

    /// What the disk query of a data load decided.
    enum BytesQuery {
        /// The load's result, from the disk.
        case hit(LoadedData)
        /// Go on to the loader; `cached` is the entry to revalidate (`.refreshCached`, or stale).
        case miss(CachedBytes?)
    }

    /// The original's bytes on disk, as `queryDisk` decides for an image: used when fresh (the
    /// metadata is read only when the origin's rules are followed or the entry is refreshed),
    /// kept to revalidate when stale or refreshed, dropped when made for other request headers.
    private func queryDiskBytes(_ request: LoadRequest, loader: any ImageLoader) async -> BytesQuery {
        guard let key = request.originalKey else { return .miss(nil) }
        let refreshing = request.options.contains(.refreshCached)
        let checksFreshness = request.settings.respectsHTTPHeaders && !refreshing
        guard let data = await request.cache.data(forKey: key) else { return .miss(nil) }
        guard refreshing || checksFreshness else { return .hit(LoadedData(data: data, source: .disk)) }
        let cached = CachedBytes(data: data, stored: await request.cache.extendedData(forKey: key))
        if refreshing { return .miss(cached) }
        switch verdict(on: cached.stored, request, loader: loader,
                       revalidateInBackground: { revalidateDataInBackground(request, loader: loader) }) {
        case .use(let metadata):
            return .hit(LoadedData(data: data, source: .disk, freshness: memoryTerms(metadata, request).freshness))
        case .revalidate: return .miss(cached)
        case .ignore: return .miss(nil)
        }
    }

    /// A 304 to the revalidation of a data load's entry: its freshness refreshed, its bytes kept.
    private func notModified(_ request: LoadRequest, cached: CachedBytes, response: ImageLoaderResponse) async -> LoadedData {
        var loaded = LoadedData(data: cached.data, source: .disk)
        if let key = request.originalKey {
            let refreshed = await refreshEntry(key, stored: cached.stored, notModified: response, request)
            loaded.freshness = memoryTerms(refreshed, request).freshness
        }
        return loaded
    }

    /// The downloaded bytes, with the origin's freshness, stored on disk under the original's
    /// key when the request's store type and the response allow (in the background, or awaited
    /// with `.waitStoreCache`, which reports a failed write).
    private func storeBytes(_ request: LoadRequest, download: Download, loader: any ImageLoader) async -> LoadedData {
        var loaded = LoadedData(data: download.data, source: .none)
        let (metadata, storable) = metadata(of: download.response, request, loader: loader)
        loaded.freshness = memoryTerms(metadata, request).freshness
        guard let key = request.originalKey, request.storeType.includesDisk, storable else { return loaded }
        let (cache, data, stored) = (request.cache, download.data, metadata.stored)
        let write = scheduledDiskWrite(request, key: key) {
            try await cache.store(nil, data: data, extendedData: stored, forKey: key, to: .disk, context: request.context)
        }
        if let write { loaded.storeFailure = await write() }
        return loaded
    }
}

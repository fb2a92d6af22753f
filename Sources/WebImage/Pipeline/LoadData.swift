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
    /// The shared part of a data load: disk, transfer (shared with image loads), store; the
    /// disk query and the transfer in spans of their own when `tracing` (as an image load's).
    func loadData(_ request: LoadRequest, loader: any ImageLoader, work: SharedWork<Never, LoadedData>,
                  tracing: Bool) async throws -> LoadedData {
        events.send(.loadStarted(request.url))
        let options = request.options
        let key = request.originalKey
        var cached: Data?
        var stored: Data?
        if let key, !options.contains(.fromLoaderOnly), request.queryType.includesDisk {
            let checksFreshness = request.settings.respectsHTTPHeaders && !options.contains(.refreshCached)
            (cached, stored) = try await traceStage("webimage.disk", tracing) {
                let cached = await request.cache.data(forKey: key)
                guard cached != nil, options.contains(.refreshCached) || checksFreshness else { return (cached, nil) }
                return (cached, await request.cache.extendedData(forKey: key))
            }
            if let bytes = cached, !options.contains(.refreshCached) {
                guard checksFreshness else { return LoadedData(data: bytes, source: .disk) }
                let metadata = stored.flatMap(CacheEntryMetadata.init(stored:))
                let freshness = metadata?.freshness(at: now())
                switch use(of: metadata, request, loader: loader) {
                case .fresh: return LoadedData(data: bytes, source: .disk, freshness: freshness)
                case .staleWhileRevalidate:
                    revalidateDataInBackground(request, loader: loader)
                    return LoadedData(data: bytes, source: .disk, freshness: freshness)
                case .revalidate: break
                case .otherVariant: (cached, stored) = (nil, nil)
                }
            }
        }
        let validators = stored.flatMap(CacheEntryMetadata.init(stored:))?.validators
        if options.contains(.fromCacheOnly) {
            if let cached { return LoadedData(data: cached, source: .disk) }
            throw ImageError.notInCache(key: key ?? request.urlString)
        }
        if let shouldDownload, !shouldDownload(request.url) {
            if let cached { return LoadedData(data: cached, source: .disk) }
            throw ImageError.downloadNotAllowed(request.url)
        }
        try Task.checkCancellation()
        let (backlog, revalidation, limiter, metrics, events) = (self.backlog, validators, rateLimiter, self.metrics, self.events)
        let download = try await traceStage("webimage.download", tracing) {
            try await downloads.run(DownloadKey(request), priority: work.priority, onEvent: nil) { transfer in
                try await ImagePipeline.transfer(request.loaderRequest(validators: revalidation, priority: transfer.priority, backlog: backlog),
                                                 loader: loader, streaming: false, transfer: transfer,
                                                 retry: request.settings.retry, limiter: limiter, metrics: metrics, events: events)
            }
        }
        // No decode waits for these bytes: they leave the loader's decode backlog now.
        download.response.backlogClaim?.release()
        if download.response.statusCode == 304 {
            if let cached {
                var loaded = LoadedData(data: cached, source: .disk)
                if let key {
                    let refreshed = await refreshEntry(key, stored: stored, notModified: download.response, request)
                    if request.settings.respectsHTTPHeaders { loaded.freshness = refreshed.freshness(at: now()) }
                }
                return loaded
            }
            throw ImageError.badStatusCode(304, url: request.url)
        }
        guard !download.data.isEmpty else { throw ImageError.decodingFailed(.emptyData, source: request.urlString, byteCount: 0) }
        try Task.checkCancellation()
        var loaded = LoadedData(data: download.data, source: .none)
        let (metadata, storable) = metadata(of: download.response, request, loader: loader)
        if request.settings.respectsHTTPHeaders { loaded.freshness = metadata.freshness(at: now()) }
        guard let key, request.storeType.includesDisk else { return loaded }
        let (cache, data) = (request.cache, download.data)
        guard storable else { return loaded }
        let write: @Sendable () async -> ImageError? = { [metadata = metadata.stored] in
            do {
                try await cache.store(nil, data: data, extendedData: metadata, forKey: key, to: .disk, context: request.context)
                return nil
            } catch {
                ImagePipeline.logger.warning("[WebImage] could not cache \(request.urlString) on disk: \(error)")
                return error as? ImageError ?? ImageError.cacheWriteFailed(path: key, reason: "\(error)")
            }
        }
        if options.contains(.waitStoreCache) {
            loaded.storeFailure = await write()
        } else {
            pendingStores.start { _ = await write() }
        }
        return loaded
    }
}

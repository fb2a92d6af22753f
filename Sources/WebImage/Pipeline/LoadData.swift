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
        let request = try makeRequest(url, options: options, context: context)
        guard let loader = loaders.loader(request.loader, for: request.url) else {
            throw ImageError.invalidURL(request.urlString)
        }
        let pipeline = self.pipeline
        let lifo = loader.capabilities.contains(.startsNewestFirst)
        return try await keepingFailedURLs(request) {
            let (work, id, _) = pipeline.dataLoads.join(DataKey(request), priority: request.callerPriority, taskPriority: Task.currentPriority,
                                                     lifo: lifo, onEvent: nil) { work in
                try await pipeline.loadData(request, loader: loader, work: work)
            }
            return try await work.wait(id)
        }
    }
}

extension ImagePipeline {
    /// The shared part of a data load: disk, transfer (shared with image loads), store.
    func loadData(_ request: LoadRequest, loader: any ImageLoader, work: SharedWork<Never, Data>) async throws -> Data {
        let options = request.options
        let key = request.originalKey
        var cached: Data?
        var validators: CacheValidators?
        if let key, !options.contains(.fromLoaderOnly), request.queryType.includesDisk {
            cached = await request.cache.data(forKey: key)
            if cached != nil, !options.contains(.refreshCached) { return cached! }
            if cached != nil, let stored = await request.cache.extendedData(forKey: key) { validators = CacheValidators(stored: stored) }
        }
        if options.contains(.fromCacheOnly) {
            if let cached { return cached }
            throw ImageError.notInCache(key: key ?? request.urlString)
        }
        if let shouldDownload, !shouldDownload(request.url) {
            if let cached { return cached }
            throw ImageError.downloadNotAllowed(request.url)
        }
        try Task.checkCancellation()
        let (backlog, revalidation, limiter, metrics, events) = (self.backlog, validators, rateLimiter, self.metrics, self.events)
        let download = try await downloads.run(DownloadKey(request), priority: work.priority, onEvent: nil) { transfer in
            var loaderRequest = request.loaderRequest(validators: revalidation, priority: transfer.priority)
            loaderRequest.backlog = backlog
            return try await ImagePipeline.transfer(loaderRequest, loader: loader, streaming: false, transfer: transfer,
                                                    retry: request.settings.retry, limiter: limiter, metrics: metrics,
                                                    events: events)
        }
        // No decode waits for these bytes: they leave the loader's decode backlog now.
        download.response.backlogClaim?.release()
        if download.response.statusCode == 304 {
            if let cached { return cached }
            throw ImageError.badStatusCode(304, url: request.url)
        }
        guard !download.data.isEmpty else { throw ImageError.decodingFailed(.emptyData, source: request.urlString, byteCount: 0) }
        try Task.checkCancellation()
        guard let key, request.storeType.includesDisk else { return download.data }
        let (cache, data) = (request.cache, download.data)
        let stored = CacheValidators(headers: download.response.headers)?.stored
        let write: @Sendable () async -> Void = {
            do { try await cache.store(nil, data: data, extendedData: stored, forKey: key, to: .disk) } catch {
                ImagePipeline.logger.warning("[WebImage] could not cache \(request.urlString) on disk: \(error)")
            }
        }
        if options.contains(.waitStoreCache) { await write() } else { pendingStores.start(write) }
        return download.data
    }
}

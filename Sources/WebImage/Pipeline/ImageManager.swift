import Foundation

/// Loads images: memory cache, then disk cache, then the loader; decodes, transforms and
/// stores them (SDWebImage's `SDWebImageManager`).
///
/// ```swift
/// let image = try await ImageManager.shared.image(for: url)
/// ```
///
/// Callers of the same URL share one transfer, and callers of the same cache key share one
/// decode, transform and store; each sees every progress event and preview of the shared work.
/// Cancelling a caller's task ends that caller at once with `CancellationError`; the shared work
/// stops when its last caller is gone.
public final class ImageManager: Sendable {
    /// The manager over the shared cache, loaders and coders.
    public static let shared = ImageManager()

    /// The default cache.
    public let cache: any ImageCaching
    /// The loaders tried for each URL.
    public let loaders: ImageLoaders
    /// The coders used to decode.
    public let coders: ImageCoders
    /// The defaults and hooks this manager was made with.
    public let configuration: Configuration

    let failedURLs = FailedURLs()
    let pipeline: ImagePipeline
    /// The configuration's default context with its plug-ins filled in.
    let defaults: ImageContext
    /// What `defaults` decide, worked out once: a call with no context of its own uses it as is.
    let defaultSettings: LoadRequest.Settings
    /// The default context's `loadTimeout`, read once.
    let defaultLoadTimeout: Duration?
    /// What every plain call decides (nil with an options processor).
    let plain: PlainCalls?
    /// The hooks of a call with no context of its own (nil: none, the usual case).
    let defaultHooks: CallHooks?
    /// What this manager worked out from each context its calls passed (`ImageContext.settings(for:make:)`).
    let contextOwner = ContextOwner()

    /// A manager over `cache`, `loaders` and `coders`.
    public init(cache: any ImageCaching = ImageCache.shared, loaders: ImageLoaders = .shared,
                coders: ImageCoders = .shared, configuration: Configuration = .init()) {
        self.cache = cache
        self.loaders = loaders
        self.coders = coders
        self.configuration = configuration
        defaults = configuration.effectiveDefaults
        defaultSettings = LoadRequest.Settings(defaults, cache: cache)
        defaultLoadTimeout = defaults.loadTimeout
        defaultHooks = CallHooks(configured: configuration.interceptors, interceptors: defaults.interceptors, modifier: defaults.imageModifier)
        plain = PlainCalls(configuration, settings: defaultSettings, hooks: defaultHooks)
        pipeline = ImagePipeline(loaders: loaders, shouldDownload: configuration.shouldDownload,
                                 maximumConcurrentLoads: configuration.maximumConcurrentLoads,
                                 rateLimiter: configuration.rateLimiter, now: configuration.currentDate)
    }

    // MARK: - Loading

    /// The image at `url`, from the memory cache, the disk cache or the loader.
    ///
    /// The call runs on its caller's executor (`nonisolated(nonsending)`) up to the wait for a
    /// load: a memory hit, or joining a load in flight, makes no hop to another executor.
    /// - Throws: `ImageError` (`invalidURL`, `blacklistedURL`, `notInCache`, a loader or decoder
    ///   error, ...) or `CancellationError`.
    @inlinable
    nonisolated(nonsending) public func image(for url: URL, options: ImageOptions = [], context: ImageContext = .init()) async throws -> Image {
        try await perform(url, options: options, context: context, onEvent: nil).image
    }

    /// The image at `urlString`; a string that is not a URL fails with `ImageError.invalidURL`.
    /// - Throws: as `image(for:options:context:)`.
    nonisolated(nonsending) public func image(for urlString: String, options: ImageOptions = [], context: ImageContext = .init()) async throws -> Image {
        guard let url = URL(string: urlString) else { throw ImageError.invalidURL(urlString) }
        return try await image(for: url, options: options, context: context)
    }

    /// The image with its data, where it came from, and the URL. Runs on its caller's executor
    /// as `image(for:options:context:)` does.
    /// - Throws: as `image(for:options:context:)`.
    @inlinable
    nonisolated(nonsending) public func result(for url: URL, options: ImageOptions = [], context: ImageContext = .init()) async throws -> ImageResult {
        try await perform(url, options: options, context: context, onEvent: nil).result(url)
    }

    /// The load as a stream: progress, previews (with `.progressiveLoad`), then `.finished`.
    /// Cancelling the iterating task (or dropping the stream) cancels this caller's load; a stream
    /// made in a task already cancelled asks nothing and ends with `CancellationError`.
    public func events(for url: URL, options: ImageOptions = [], context: ImageContext = .init())
        -> AsyncThrowingStream<ImageEvent, any Error> {
        // A caller already cancelled asks nothing: the load starts cancelled, so it ends as any
        // cancelled call does (one `loadFailed`), before the stream is first iterated.
        .produced { continuation in
            let outcome = try await self.perform(url, options: options, context: context) { continuation.yield($0) }
            continuation.yield(.finished(outcome.result(url)))
        }
    }

    /// The load of `url` as a task object (Nuke's `pipeline.imageTask(with:)`): decided now, as
    /// `image(for:)` decides (a memory hit makes a task already completed), then running
    /// whether or not the task is held; its callers await `image` or `result`, watch its
    /// streams, change its `priority` or `cancel()` it. A task watches its load's progress, so
    /// its transfer is streamed (see `ImageTask`).
    @inlinable
    public func imageTask(for url: URL, options: ImageOptions = [], context: ImageContext = .init()) -> ImageTask {
        var live: LiveImageTask?
        do {
            // The task's own state is made only when the call subscribes: a hit makes none.
            switch try decideAccounted(url, options: options, context: context, onEvent: { LiveImageTask.handler(&live, url) }) {
            case .hit(let image):
                return ImageTask(url: url, .memory(image), priority: priority(of: options))
            case .subscribed(let work, let id, let request):
                return started(live, url, work, id, request, context: context)
            case .hooked(let hooks):
                return hookedTask(url, options: options, context: context, hooks: hooks)
            }
        } catch {
            return ImageTask(url: url, .failed(error), priority: priority(of: options))
        }
    }

    /// The task of a call that subscribed to `work` as subscriber `id`: it waits for the work's
    /// output in a task of its own.
    @usableFromInline
    func started(_ live: LiveImageTask?, _ url: URL, _ work: SharedWork<ImageEvent, SharedResult>, _ id: Int,
                 _ request: LoadRequest, context: ImageContext) -> ImageTask {
        let task = live ?? LiveImageTask(url: url)
        task.attach(work, id: id, priority: request.callerPriority)
        task.run { [self] in .shared(try await waitForImage(work, id, request, context: context)) }
        return ImageTask(url: url, .live(task))
    }

    /// The priority a call's `options` ask for, with the configuration's.
    @inlinable
    func priority(of options: ImageOptions) -> ImageLoaderPriority {
        ImageLoaderPriority(configuration.defaultOptions.isEmpty ? options : options.union(configuration.defaultOptions))
    }

    /// The image a call of `url` with `options` and `context` would be given from memory,
    /// answered now: without suspending, and without touching the disk or the network
    /// (SDWebImage's `imageFromMemoryCacheForKey:` under the manager's key, Nuke's
    /// `pipeline.cache[request]`, Kingfisher's `retrieveImageInMemoryCache`). Nil when the image
    /// is not in memory, when the call would not ask memory (`.fromLoaderOnly`, a query type
    /// without memory), or when the cache cannot answer without suspending (its capabilities).
    /// The call's image modifier is applied; its interceptors, which may suspend, are not run.
    public func cachedImage(for url: URL, options: ImageOptions = [], context: ImageContext = .init()) -> Image? {
        let request = makeRequest(url, url.absoluteString, options: options, context: context)
        guard request.queriesMemory, request.settings.hasSynchronousMemory, let key = request.cacheKey,
              let image = request.cache.cachedImage(forKey: key) else { return nil }
        let matching = image.matching(request.decodeOptions)
        return hooks(for: context)?.modifier.map { $0.modify(matching) } ?? matching
    }

    /// The key the image at `url` is cached under with `context` (filter, thumbnail and
    /// transformer applied as SDWebImage does); empty when the key filter says not to cache.
    public func cacheKey(for url: URL, context: ImageContext = .init()) -> String {
        makeRequest(url, url.absoluteString, options: [], context: context).cacheKey ?? ""
    }

    // MARK: - Failed URLs

    /// Takes `url` off the blacklist.
    public func removeFailedURL(_ url: URL) async { failedURLs.remove(url) }

    /// Empties the blacklist.
    public func removeAllFailedURLs() async { failedURLs.removeAll() }

    /// Whether `url` is blacklisted (SDWebImage's `SDWebImageManager.isFailedURL` in spirit:
    /// a URL that failed permanently and is not tried again without `.retryFailed`).
    public func isFailedURL(_ url: URL) async -> Bool { failedURLs.contains(url) }

    /// Cancels every load in flight: each caller gets `CancellationError`.
    public func cancelAll() async { pipeline.cancelAll() }

    /// Waits until the disk writes of finished loads are done. Loads return before their disk
    /// write unless `.waitStoreCache` is set; a program that ends right after loading (a
    /// command-line tool) calls this first, or its last writes end with the process.
    public func waitForPendingStores() async { await pipeline.pendingStores.waitForAll() }

    /// Loads in flight (shared decode-transform-store works) and transfers in flight: what
    /// SDWebImage's `SDWebImageManager.isRunning` and `SDWebImageDownloader.currentDownloadCount`
    /// tell, as counts.
    public func inFlightCounts() async -> (loads: Int, downloads: Int) { pipeline.counts() }

    /// The scale an `@2x` or `@3x` suffix of the file name asks for (SDWebImage's rule), else 1.
    static func scaleFactor(forKey key: String) -> Double {
        let at = UInt8(ascii: "@")
        guard key.utf8.withContiguousStorageIfAvailable({ $0.contains(at) }) ?? key.utf8.contains(at) else { return 1 }
        let name = PathExtension.stem(of: key)
        for factor in [2, 3] where name.hasSuffix("@\(factor)x") { return Double(factor) }
        return 1
    }
}

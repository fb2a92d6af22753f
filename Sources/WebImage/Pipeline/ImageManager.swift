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
    private let defaults: ImageContext
    /// What `defaults` decide, worked out once (a call with an empty context uses it as is).
    private let defaultSettings: CallSettings

    /// A manager over `cache`, `loaders` and `coders`.
    public init(cache: any ImageCaching = ImageCache.shared, loaders: ImageLoaders = .shared,
                coders: ImageCoders = .shared, configuration: Configuration = .init()) {
        self.cache = cache
        self.loaders = loaders
        self.coders = coders
        self.configuration = configuration
        defaults = configuration.effectiveDefaults
        defaultSettings = CallSettings(defaults)
        pipeline = ImagePipeline(shouldDownload: configuration.shouldDownload)
    }

    // MARK: - Loading

    /// The image at `url`, from the memory cache, the disk cache or the loader.
    /// - Throws: `ImageError` (`invalidURL`, `blacklistedURL`, `notInCache`, a loader or decoder
    ///   error, ...) or `CancellationError`.
    public func image(for url: URL, options: ImageOptions = [], context: ImageContext = .init()) async throws -> Image {
        try await load(url, options: options, context: context, onEvent: nil).image
    }

    /// The image at `urlString`; a string that is not a URL fails with `ImageError.invalidURL`.
    /// - Throws: as `image(for:options:context:)`.
    public func image(for urlString: String, options: ImageOptions = [], context: ImageContext = .init()) async throws -> Image {
        guard let url = URL(string: urlString) else { throw ImageError.invalidURL(urlString) }
        return try await image(for: url, options: options, context: context)
    }

    /// The image with its data, where it came from, and the URL.
    /// - Throws: as `image(for:options:context:)`.
    public func result(for url: URL, options: ImageOptions = [], context: ImageContext = .init()) async throws -> ImageResult {
        try await load(url, options: options, context: context, onEvent: nil).result
    }

    /// The load as a stream: progress, previews (with `.progressiveLoad`), then `.finished`.
    /// Cancelling the iterating task (or dropping the stream) cancels this caller's load.
    public func events(for url: URL, options: ImageOptions = [], context: ImageContext = .init())
        -> AsyncThrowingStream<ImageEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ImageEvent, any Error>.makeStream()
        let task = Task {
            do {
                let outcome = try await self.load(url, options: options, context: context) { continuation.yield($0) }
                continuation.yield(.finished(outcome.result))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The key the image at `url` is cached under with `context` (filter, thumbnail and
    /// transformer applied as SDWebImage does); empty when the key filter says not to cache.
    public func cacheKey(for url: URL, context: ImageContext = .init()) -> String {
        CallSettings(context.merged(over: defaults)).cacheKeys(for: url, absoluteString: url.absoluteString).final ?? ""
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

    // MARK: - The call

    func load(_ url: URL, options callOptions: ImageOptions, context callContext: ImageContext,
              onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> LoadOutcome {
        // Deciding is synchronous, so that this function's frame stays small: a caller that joins
        // work in flight needs no more task memory than its first slab (a thousand joining
        // callers then allocate nothing).
        switch try admit(url, options: callOptions, context: callContext, onEvent: onEvent) {
        case .joined(let work, let id, let options):
            return try await settle(url, options) { try await work.wait(id) }
        case .query(let prepared):
            return try await queryThenRun(prepared, onEvent: onEvent)
        }
    }

    /// What a call does after its synchronous checks.
    private enum Admission {
        /// It joined the work in flight for its key, as subscriber `id`.
        case joined(SharedWork<ImageEvent, SharedResult>, id: Int, options: ImageOptions)
        /// It asks the memory cache, then runs (or joins) the shared work.
        case query(PreparedLoad)
    }

    /// Validates the call, merges its options and context over the defaults, works out its keys,
    /// and joins the work in flight for them when there is one.
    private func admit(_ url: URL, options callOptions: ImageOptions, context callContext: ImageContext,
                       onEvent: (@Sendable (ImageEvent) -> Void)?) throws -> Admission {
        try Task.checkCancellation()
        let string = url.absoluteString
        guard !string.isEmpty, let scheme = url.scheme, !scheme.isEmpty else { throw ImageError.invalidURL(string) }
        var options = configuration.defaultOptions.isEmpty ? callOptions : callOptions.union(configuration.defaultOptions)
        let context: ImageContext, settings: CallSettings
        if callContext.isEmpty, configuration.optionsProcessor == nil {
            (context, settings) = (defaults, defaultSettings)
        } else {
            var merged = callContext.isEmpty ? defaults : callContext.merged(over: defaults)
            if let processor = configuration.optionsProcessor {
                (options, merged) = processor(url, options, merged)
            }
            (context, settings) = (merged, CallSettings(merged))
        }
        if !options.contains(.retryFailed), failedURLs.contains(url) { throw ImageError.blacklistedURL(url) }
        let keys = settings.cacheKeys(for: url, absoluteString: string)
        let decode = settings.decodeOptions(options, key: keys.final ?? string)
        let unique: UUID? = callContext.isShareable ? nil : UUID()
        let workKey = LoadPlan.WorkKey(
            url: string, cacheKey: keys.final, decode: decode,
            options: options.subtracting([.retryFailed, .lowPriority, .highPriority, .queryMemoryData]).rawValue,
            query: settings.query, store: settings.store, originalQuery: settings.originalQuery,
            originalStore: settings.originalStore, stretches: settings.stretches, cacheID: settings.cacheID,
            loaderID: settings.loaderID, coderID: settings.coderID, unique: unique)
        let queriesMemory = keys.final != nil && !options.contains(.fromLoaderOnly) && !options.contains(.refreshCached)
            && settings.query.includesMemory
        // Work in flight for this key: join it (cheaper than asking the memory cache).
        if queriesMemory, let (work, id) = pipeline.works.joinIfRunning(workKey, onEvent: onEvent) {
            return .joined(work, id: id, options: options)
        }
        return .query(PreparedLoad(url: url, string: string, options: options, context: context, keys: keys,
                                   decode: decode, cache: context.cache ?? cache, workKey: workKey,
                                   unique: unique, queriesMemory: queriesMemory))
    }

    /// The memory cache, then the shared work (disk, download, decode, transform, store).
    private func queryThenRun(_ prepared: PreparedLoad, onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> LoadOutcome {
        let (url, options, context) = (prepared.url, prepared.options, prepared.context)
        // 1. Memory: the fast path, a hit needs nothing else.
        if prepared.queriesMemory {
            if let hit = await queryMemory(prepared) { return .hit(hit) }
            try Task.checkCancellation()
        }
        guard let loader = context.loader ?? loaders.loader(for: url), loader.canLoad(url) else {
            throw ImageError.invalidURL(prepared.string)
        }
        let downloadKey = LoadPlan.DownloadKey(
            url: prepared.string, cookies: options.contains(.handleCookies),
            invalidCertificates: options.contains(.allowInvalidSSLCertificates),
            timeout: context.downloadTimeout, conditional: options.contains(.refreshCached),
            loader: instanceIdentity(context.loader), unique: prepared.unique)
        let plan = LoadPlan(url: url, options: options, context: context, cacheKey: prepared.keys.final,
                            originalKey: prepared.keys.original, decodeOptions: prepared.decode, cache: prepared.cache,
                            loader: loader, coders: coders, workKey: prepared.workKey, downloadKey: downloadKey)
        return try await settle(url, options) { try await pipeline.run(plan, onEvent: onEvent) }
    }

    /// Runs the shared part of a load and keeps the failed-URL list: a success with
    /// `.retryFailed` takes the URL off, a permanent failure puts it on.
    private func settle(_ url: URL, _ options: ImageOptions, _ body: () async throws -> SharedResult) async throws -> LoadOutcome {
        do {
            let shared = try await body()
            if options.contains(.retryFailed) { failedURLs.remove(url) }
            return .shared(shared)
        } catch {
            let block = configuration.shouldBlockFailedURL?(url, error) ?? ImageManager.isPermanentFailure(error)
            if block, !options.contains(.retryFailed) { failedURLs.insert(url) }
            throw error
        }
    }

    /// The scale an `@2x` or `@3x` suffix of the file name asks for (SDWebImage's rule), else 1.
    static func scaleFactor(forKey key: String) -> Double {
        let at = UInt8(ascii: "@")
        guard key.utf8.withContiguousStorageIfAvailable({ $0.contains(at) }) ?? key.utf8.contains(at) else { return 1 }
        let name = PathExtension.stem(of: key)
        for factor in [2, 3] where name.hasSuffix("@\(factor)x") { return Double(factor) }
        return 1
    }
}

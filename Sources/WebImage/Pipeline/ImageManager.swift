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
    private let defaults: ImageContext
    /// What `defaults` decide, worked out once: a call with no context of its own uses it as is.
    private let defaultSettings: LoadRequest.Settings
    /// The default context's `loadTimeout`, read once.
    let defaultLoadTimeout: Duration?
    /// The memory fast path of plain calls, when the defaults allow it.
    let plainHit: PlainMemoryHit?

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
        plainHit = PlainMemoryHit(configuration, settings: defaultSettings)
        pipeline = ImagePipeline(loaders: loaders, shouldDownload: configuration.shouldDownload,
                                 maximumConcurrentLoads: configuration.maximumConcurrentLoads,
                                 rateLimiter: configuration.rateLimiter)
    }

    // MARK: - Loading

    /// The image at `url`, from the memory cache, the disk cache or the loader.
    ///
    /// The call runs on its caller's executor (`nonisolated(nonsending)`) up to the wait for a
    /// load: a memory hit, or joining a load in flight, makes no hop to another executor.
    /// - Throws: `ImageError` (`invalidURL`, `blacklistedURL`, `notInCache`, a loader or decoder
    ///   error, ...) or `CancellationError`.
    nonisolated(nonsending) public func image(for url: URL, options: ImageOptions = [], context: ImageContext = .init()) async throws -> Image {
        switch plainShortcut(url, options: options, context: context) {
        case .hit(let image)?:
            return image
        case .joined(let work, let id, let request)?:
            return try await waitJoined(url, work, id: id, request).result.image
        case nil:
            return try await load(url, options: options, context: context, onEvent: nil).image
        }
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
    nonisolated(nonsending) public func result(for url: URL, options: ImageOptions = [], context: ImageContext = .init()) async throws -> ImageResult {
        switch plainShortcut(url, options: options, context: context) {
        case .hit(let image)?:
            return ImageResult(image: image, data: nil, cacheType: .memory, url: url)
        case .joined(let work, let id, let request)?:
            return try await waitJoined(url, work, id: id, request).result
        case nil:
            return try await load(url, options: options, context: context, onEvent: nil).result
        }
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
        LoadRequest(url: url, urlString: url.absoluteString, options: [],
                    settings: LoadRequest.Settings(context.merged(over: defaults), cache: cache), isShareable: false).cacheKey ?? ""
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

    @inline(never)
    func load(_ url: URL, options callOptions: ImageOptions, context callContext: ImageContext,
              onEvent: (@Sendable (ImageEvent) -> Void)?, bounded: Bool = false) async throws -> LoadOutcome {
        if !bounded, let limit = loadTimeout(callContext) {
            return try await load(url, options: callOptions, context: callContext, onEvent: onEvent, within: limit)
        }
        // Deciding is synchronous and out of line, as are the steps around the wait, so that
        // this function's frame (task memory every joining caller allocates) holds little more
        // than the outcome (a reference): 192 bytes, from 2,048 when the timeout's task group,
        // the whole pipeline and a copy of the context's fields were inlined into it and the
        // outcome held a whole result; a joining caller's frames fit its task's first slab of
        // task memory, as a bare waiting task's do (counted under callgrind, Benchmarks/README.md).
        do {
            let outcome: LoadOutcome
            switch try admit(url, options: callOptions, context: callContext, onEvent: onEvent) {
            case .joined(let work, let id, let request):
                outcome = try await settle(request) { try await work.wait(id) }
            case .query(let request):
                outcome = try await queryThenRun(request, onEvent: onEvent)
            }
            succeeded(url, outcome.cacheType)
            return outcome
        } catch {
            // A bounded call's cancellation is its deadline's or its caller's: the deadline's
            // caller (below) tells which and counts it.
            if !(bounded && error is CancellationError) { failed(url, error) }
            throw error
        }
    }

    /// The call's time limit: its context's, else the configuration's; nil: none. Out of line:
    /// reading the context inline put a copy of its storage in `load`'s async frame.
    @inline(never)
    private func loadTimeout(_ context: ImageContext) -> Duration? {
        context.isEmpty ? defaultLoadTimeout : context.loadTimeout ?? defaultLoadTimeout
    }

    /// Counts a finished call and tells the lifecycle watchers. Not inlined, as the other
    /// synchronous steps of `load` (`admit`, `failed`): an async function's frame holds the
    /// temporaries of everything inlined into it, and every joining caller allocates that frame.
    @inline(never)
    func succeeded(_ url: URL, _ source: ImageCacheType) {
        pipeline.metrics.loaded(from: source)
        pipeline.events.send(.loadFinished(url, source: source))
    }

    /// Counts a failed call and tells the lifecycle watchers.
    @inline(never)
    func failed(_ url: URL, _ error: any Error) {
        pipeline.metrics.failed(error)
        pipeline.events.send(.loadFailed(url, error: error))
    }

    /// The call, failing with `ImageError.timedOut(url:)` when it takes longer than `limit`: the
    /// load is a child task, cancelled then (it leaves the shared work like a cancelled caller).
    @inline(never)   // its task group's state stays out of the plain call's frame
    private func load(_ url: URL, options: ImageOptions, context: ImageContext, onEvent: (@Sendable (ImageEvent) -> Void)?,
                      within limit: Duration) async throws -> LoadOutcome {
        struct DeadlinePassed: Error {}
        do {
            return try await withThrowingTaskGroup(of: LoadOutcome?.self) { group in
                group.addTask { try await self.load(url, options: options, context: context, onEvent: onEvent, bounded: true) }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let outcome = first else { throw DeadlinePassed() }
                return outcome
            }
        } catch is DeadlinePassed {
            let error = ImageError.timedOut(url: url)
            failed(url, error)
            throw error
        } catch let error as CancellationError {
            failed(url, error)
            throw error
        }
    }

    /// What a call does after its synchronous checks.
    private enum Admission {
        /// It joined the work in flight for its key, as subscriber `id`.
        case joined(SharedWork<ImageEvent, SharedResult>, id: Int, LoadRequest)
        /// It asks the memory cache, then runs (or joins) the shared work.
        case query(LoadRequest)
    }

    /// Validates the call, merges its options and context over the defaults into one
    /// `LoadRequest`, and joins the work in flight for its key when there is one.
    @inline(never)
    private func admit(_ url: URL, options callOptions: ImageOptions, context callContext: ImageContext,
                       onEvent: (@Sendable (ImageEvent) -> Void)?) throws -> Admission {
        // A plain call joins a plain call's work in flight by its URL, with that call's request:
        // its own would be the same.
        if callOptions.isEmpty, callContext.isEmpty, configuration.optionsProcessor == nil, !pipeline.works.isEmpty {
            try Task.checkCancellation()
            if !failedURLs.contains(url),
               let (work, id, key) = pipeline.works.joinPlain(url.absoluteString, priority: { $0.request.callerPriority }, onEvent: onEvent) {
                followPriority(of: key.request, in: work, id: id)
                pipeline.spans.joined(work)
                return .joined(work, id: id, key.request)
            }
        }
        let request = try makeRequest(url, options: callOptions, context: callContext)
        // Work in flight for this key: join it (cheaper than asking the memory cache). With no
        // work in flight at all (a warm cache's usual state) the key is not even made.
        if request.queriesMemory, !pipeline.works.isEmpty,
           let (work, id) = pipeline.works.joinIfRunning(WorkKey(request), priority: request.callerPriority, onEvent: onEvent) {
            followPriority(of: request, in: work, id: id)
            pipeline.spans.joined(work)
            return .joined(work, id: id, request)
        }
        return .query(request)
    }

    /// Validates the call and merges its options and context over the defaults into one `LoadRequest`.
    func makeRequest(_ url: URL, options callOptions: ImageOptions, context callContext: ImageContext) throws -> LoadRequest {
        try Task.checkCancellation()
        let string = url.absoluteString
        guard URLScheme.isPresent(in: string) else { throw ImageError.invalidURL(string) }
        var options = configuration.defaultOptions.isEmpty ? callOptions : callOptions.union(configuration.defaultOptions)
        let settings: LoadRequest.Settings
        if callContext.isEmpty, configuration.optionsProcessor == nil {
            settings = defaultSettings
        } else {
            var context = callContext.isEmpty ? defaults : callContext.merged(over: defaults)
            if let processor = configuration.optionsProcessor { (options, context) = processor(url, options, context) }
            settings = LoadRequest.Settings(context, cache: cache)
        }
        if !options.contains(.retryFailed), failedURLs.contains(url) { throw ImageError.blacklistedURL(url) }
        return LoadRequest(url: url, urlString: string, options: options, settings: settings,
                           isShareable: callContext.isShareable,
                           isPlain: callOptions.isEmpty && callContext.isEmpty && configuration.optionsProcessor == nil)
    }

    /// The memory cache, then the shared work (disk, download, decode, transform, store).
    @inline(never)   // the whole pipeline's state stays out of a joining caller's frame
    private func queryThenRun(_ request: LoadRequest, onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> LoadOutcome {
        // 1. Memory: the fast path, a hit needs nothing else.
        if request.queriesMemory {
            if let hit = await queryMemory(request) { return .hit(SharedResult(hit)) }
            try Task.checkCancellation()
        }
        guard let loader = loaders.loader(request.loader, for: request.url) else {
            throw ImageError.invalidURL(request.urlString)
        }
        let (coders, pipeline) = (self.coders, self.pipeline)
        // Works wait for their start in the order of the loader's own queue.
        let lifo = loader.capabilities.contains(.startsNewestFirst)
        return try await settle(request) {
            let trace = WorkSpans.creatorContext()
            // A plain call's work can be joined by its URL (`admit`), as where the key is joined: when the call asks memory first.
            let plainURL = request.isPlain && request.queriesMemory ? request.urlString : nil
            let (work, id, isNew) = pipeline.works.join(WorkKey(request), priority: request.callerPriority, taskPriority: Task.currentPriority,
                                                        lifo: lifo, plainURL: plainURL, onEvent: onEvent) { work in
                try await pipeline.load(request, loader: loader, coders: coders, work: work, trace: trace)
            }
            followPriority(of: request, in: work, id: id)
            if !isNew { pipeline.spans.joined(work) }
            return try await work.wait(id)
        }
    }

    /// A caller that gave a priority handle moves its subscription when the handle changes.
    func followPriority(of request: LoadRequest, in work: SharedWork<ImageEvent, SharedResult>, id: Int) {
        guard let handle = request.settings.priorityHandle else { return }
        handle.observe { [weak work] handle in work?.setPriority(id, to: handle.value) }
        work.setPriority(id, to: handle.value)   // a change since the join
    }

    /// Runs the shared part of a load and keeps the failed-URL list: a success with
    /// `.retryFailed` takes the URL off, a permanent failure puts it on.
    private func settle(_ request: LoadRequest, _ body: () async throws -> SharedResult) async throws -> LoadOutcome {
        let shared = try await keepingFailedURLs(request, body)
        shared.pickedUp()
        return .shared(shared)
    }

    /// Runs `body`: a success with `.retryFailed` takes the URL off the blacklist, a permanent
    /// failure puts it on.
    func keepingFailedURLs<Output>(_ request: LoadRequest, _ body: () async throws -> Output) async throws -> Output {
        do {
            let output = try await body()
            if request.options.contains(.retryFailed) { succeededAfterRetry(request.url) }
            return output
        } catch {
            blockIfPermanent(request, error)
            throw error
        }
    }

    /// Takes a URL loaded with `.retryFailed` off the blacklist (out of line, as `succeeded`).
    @inline(never)
    private func succeededAfterRetry(_ url: URL) { failedURLs.remove(url) }

    /// Puts the URL of a permanent failure on the blacklist, unless the call retries failed URLs.
    @inline(never)
    func blockIfPermanent(_ request: LoadRequest, _ error: any Error) {
        let block = configuration.shouldBlockFailedURL?(request.url, error) ?? ImageManager.isPermanentFailure(error)
        if block, !request.options.contains(.retryFailed) { failedURLs.insert(request.url) }
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

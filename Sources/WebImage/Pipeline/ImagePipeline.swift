import Foundation
import Logging
import Synchronization
import Tracing

/// The shared part of a load, after the memory cache missed: disk cache, download, decode,
/// transform, store. Runs once per work key however many callers wait for it.
///
/// One route, drawn in the order a call runs it (one file per step):
///
///     caller ── image(for:) · result(for:) · events(for:) ── perform (CallWait)
///        ├─ decide (CallDecision, synchronous): cancellation, scheme, failed URLs;
///        │    plain call: the manager's template request (PlainCalls), else the call's LoadRequest;
///        │    memory hit ─▶ return │ else a subscription to the shared work of its key:
///        │    joined when in flight (WorkKey, or a plain call's alias), else started (subscribe)
///        ├─ waitOn (CallWait): the subscription's wait; a deadline is the subscriber's
///        │    time-out on the manager's one timer (Deadlines), the work going on for the others
///        └─ bookkeeping (CallWait): failed-URL list, metrics, lifecycle events
///     data(for:) (LoadData) ── the same checks, subscription, wait and bookkeeping (accounted,
///                             waitOn) and span; one work per DataKey, the plan below
///                             stopped after 3 (2 on the original's bytes, 3, then 6's disk
///                             write), with the same rules
///
///     shared work (SharedWork, one per WorkKey ⊃ DownloadKey; its task starts when
///     LoadAdmission admits it, at most maximumConcurrentLoads at once)
///        1. memory       asked by suspending (a cache without synchronous memory, or
///                        .queryMemoryData), before admission ─▶ hit
///        2. QueryDisk    disk cache (or the cached original of a derived image) ─▶ hit;
///                        HTTPFreshness: a stale entry goes on to be revalidated (or, within
///                        stale-while-revalidate, is a hit revalidated in the background)
///        3. FetchData    shared transfer (one per DownloadKey) ─▶ progress, previews
///        4. Decode       incremental decoder's image, or a full decode; thumbnail box
///        5. Process      the transformer
///        6. Store        memory (while the response is fresh), callers resumed (decodeSlots:
///                        one per core, decode to delivery), disk in the background
///                        (PendingStores) as the data-cache policy says, with the freshness
///
/// Cancellation is checked after every stage: when the last caller leaves, the work's task is
/// cancelled and nothing after the current stage runs, nothing is stored.
struct ImagePipeline: Sendable {
    /// Decode-transform-store works, by work key; at most `admission.limit` of them started.
    let works: InFlightTable<WorkKey, ImageEvent, SharedResult>
    /// Data loads (`ImageManager.data(for:)`), by data key; admitted with the works.
    let dataLoads: InFlightTable<DataKey, Never, LoadedData>
    /// Where works wait before their task starts (`Configuration.maximumConcurrentLoads`).
    let admission: LoadAdmission
    /// Transfers, by download key.
    let downloads = InFlightTable<DownloadKey, DownloadEvent, Download>()
    let shouldDownload: (@Sendable (URL) -> Bool)?
    /// Counters, timers and gauges through swift-metrics (no-ops until a backend is bootstrapped).
    let metrics = LoadMetrics()
    /// The subscribers of `ImageManager.lifecycleEvents()`.
    let events = LoadEventHub()
    /// The spans of the works running (swift-distributed-tracing).
    let spans = WorkSpans()
    /// The deadlines of the manager's waiting calls, on one timer.
    let deadlines = Deadlines()
    /// The manager's loaders (an alternative source picks its own).
    let loaders: ImageLoaders
    /// The token bucket new transfers pass (`Configuration.rateLimiter`); nil: none.
    let rateLimiter: RateLimiter?
    /// Disk writes running in the background, so that they can be awaited.
    let pendingStores = PendingStores()
    /// One load per core decodes at a time, counted from its decode until its image is in the
    /// memory cache and its callers are resumed. Downloads end faster than decodes; unbounded,
    /// their decodes ran ahead of the memory stores and callers of finished loads, which kept
    /// every decoded image alive until the burst was over (MemorySoakTests holds the bound).
    let decodeSlots = TaskSlots(max(1, ProcessInfo.processInfo.activeProcessorCount))
    /// Downloaded bodies waiting for a decode slot: the HTTP loader starts no new transfer
    /// for this manager while they are over 64 MB.
    let backlog = BacklogGate(limit: 64 << 20)
    /// A decoded image at least this large keeps its decode slot until every caller it was
    /// delivered to has taken it (smaller ones are cheap to leave in queued callers).
    static let pickupWaitCost = 1 << 20
    static let logger = Logger(label: "WebImage.ImageManager")
    /// The clock of HTTP freshness (`Configuration.currentDate`).
    let now: @Sendable () -> Date
    /// Cache keys being revalidated in the background (`stale-while-revalidate`): one at a time.
    let revalidating = BackgroundRevalidations()

    init(loaders: ImageLoaders, shouldDownload: (@Sendable (URL) -> Bool)?, maximumConcurrentLoads: Int, rateLimiter: RateLimiter?,
         now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
        self.loaders = loaders
        self.shouldDownload = shouldDownload
        self.rateLimiter = rateLimiter
        admission = LoadAdmission(limit: maximumConcurrentLoads)
        works = InFlightTable<WorkKey, ImageEvent, SharedResult>(admission: admission)
        dataLoads = InFlightTable<DataKey, Never, LoadedData>(admission: admission)
    }

    /// The body of a finished transfer.
    struct Download: Sendable {
        var data: Data
        var response: ImageLoaderResponse
    }

    /// What a shared transfer reports to the works that wait for it.
    enum DownloadEvent: Sendable {
        case progress(ImageProgress)
        /// A chunk of the body and where it starts.
        case data(Data, offset: Int64)

        /// Progress is replayed to a work that joins late; chunks are not (the transfer holds
        /// the body once; a late work decodes the whole body at the end).
        @Sendable static func isReplayed(_ event: DownloadEvent) -> Bool {
            if case .progress = event { return true }
            return false
        }
    }

    func cancelAll() {
        works.cancelAll()
        dataLoads.cancelAll()
        downloads.cancelAll()
    }

    func counts() -> (loads: Int, downloads: Int) { (works.count + dataLoads.count, downloads.count) }

    // MARK: - Stages

    /// The shared work of one work key, from the disk query to the store; `work` is its handle
    /// (events to send, the callers' priority); `trace` is the trace of the caller that made it.
    func load(_ request: LoadRequest, loader: any ImageLoader, coders: ImageCoders,
              work: SharedWork<ImageEvent, SharedResult>, trace: ServiceContext?) async throws -> SharedResult {
        events.send(.loadStarted(request.url))
        return try await spans.traced(request, work: work, parent: trace) { tracing in
            try await loadStages(request, loader: loader, coders: coders, work: work, tracing: tracing)
        }
    }

    /// The stages of `load`, in the load's span (each stage in a span of its own when `tracing`).
    /// The synchronous steps between the stages are functions of their own: written inline,
    /// their temporaries sized this async frame though no suspension needs them.
    private func loadStages(_ request: LoadRequest, loader: any ImageLoader, coders: ImageCoders,
                            work: SharedWork<ImageEvent, SharedResult>, tracing: Bool) async throws -> SharedResult {
        // 2. Disk (the manager looked in memory).
        var cached: ImageCacheResult?
        var original: StaleOriginal?
        if request.queriesDisk {
            switch try await traceStage("webimage.disk", tracing, { try await queryDisk(request, loader: loader, coders: coders) }) {
            case .hit(let result): return result
            case .miss(let entry, let stale): (cached, original) = (entry, stale)
            }
        }
        if let ended = try endsBeforeTransfer(request, cached: cached, work: work) { return ended }
        do {
            return try await transferAndDecode(request, cached: cached, original: original, loader: loader, coders: coders, work: work,
                                               tracing: tracing)
        } catch where triesAlternatives(after: error, request) {
            return try await loadAlternative(request, failure: error, coders: coders, work: work, tracing: tracing)
        }
    }

    /// What ends a load before its transfer: a cache-only load (its cached entry, or
    /// `notInCache`), a URL `shouldDownload` refuses, cancellation. Refreshing, the callers
    /// watching events see the cached image before the network answers.
    @inline(never)
    private func endsBeforeTransfer(_ request: LoadRequest, cached: ImageCacheResult?,
                                    work: SharedWork<ImageEvent, SharedResult>) throws -> SharedResult? {
        if let ended = try endsWithoutTransfer(request, cached: cached, key: request.cacheKey) {
            return SharedResult(ImageResult(ended, url: request.url))
        }
        try Task.checkCancellation()
        if let cached, request.options.contains(.refreshCached) { work.send(.cached(ImageResult(cached, url: request.url))) }
        return nil
    }

    /// The rules that end a load before its transfer, the same for an image and for bytes: a
    /// cache-only load (`.fromCacheOnly`) gets its cached entry or `notInCache` (for `key`); a
    /// URL `shouldDownload` refuses gets its cached entry or `downloadNotAllowed`.
    /// - Returns: the cached entry that ends the load; nil: go on to the loader.
    func endsWithoutTransfer<Cached>(_ request: LoadRequest, cached: Cached?, key: String?) throws -> Cached? {
        if request.options.contains(.fromCacheOnly) {
            guard let cached else { throw ImageError.notInCache(key: key ?? request.urlString) }
            return cached
        }
        if let shouldDownload, !shouldDownload(request.url) {
            guard let cached else { throw ImageError.downloadNotAllowed(request.url) }
            return cached
        }
        return nil
    }

    /// Whether a failed load goes on to the context's alternative sources.
    @inline(never)
    private func triesAlternatives(after error: any Error, _ request: LoadRequest) -> Bool {
        !(error is CancellationError) && !Task.isCancelled && request.context.alternativeSources?.isEmpty == false
    }

    /// Stage 3, the download (shared, with previews when asked), then stages 4 to 6.
    @inline(never)
    private func transferAndDecode(_ request: LoadRequest, cached: ImageCacheResult?, original: StaleOriginal?, loader: any ImageLoader,
                                   coders: ImageCoders, work: SharedWork<ImageEvent, SharedResult>, tracing: Bool) async throws -> SharedResult {
        let validators = Self.validators(of: cached) ?? Self.validators(of: original?.hit)
        let progressive = request.options.contains(.progressiveLoad) && !request.options.contains(.avoidDecodeImage)
        let (download, incremental) = try await traceStage("webimage.download", tracing) {
            try await fetch(request, loader: loader, coders: coders, validators: validators, progressive: progressive, work: work)
        }
        if cached == nil, let original, try download.isNotModified(revalidating: true, request) {
            return try await notModified(request, original: original, response: download.response, coders: coders)
        }
        return try await decodeAndStore(request, download: download, incremental: incremental, cached: cached, loader: loader,
                                        coders: coders, work: work, tracing: tracing)
    }

    /// A 304 to the revalidation of a derived image's stale original: the original's entry is
    /// refreshed, and the image is made from it (nothing is downloaded again).
    @inline(never)
    private func notModified(_ request: LoadRequest, original: StaleOriginal, response: ImageLoaderResponse,
                             coders: ImageCoders) async throws -> SharedResult {
        response.backlogClaim?.release()
        let refreshed = await refreshEntry(original.key, in: request.settings.originalCache, stored: original.hit.extendedData,
                                           notModified: response, request)
        try Task.checkCancellation()
        return SharedResult(try await derived(request, from: original.hit, metadata: refreshed, stored: refreshed.stored, coders: coders))
    }

    /// The validators stored with a cached entry, to revalidate it.
    @inline(never)
    private static func validators(of cached: ImageCacheResult?) -> CacheValidators? {
        cached?.extendedData.flatMap(CacheEntryMetadata.init(stored:))?.validators
    }

    /// The alternative sources in order, after the asked URL failed with `failure` (thrown
    /// again when every one fails too). Each is loaded as the asked URL would be, by its own
    /// loader, and its image stored under the asked URL's keys.
    @inline(never)
    private func loadAlternative(_ request: LoadRequest, failure: any Error, coders: ImageCoders,
                                 work: SharedWork<ImageEvent, SharedResult>, tracing: Bool) async throws -> SharedResult {
        for source in request.alternatives {
            try Task.checkCancellation()
            guard let loader = loaders.loader(request.loader, for: source.url) else { continue }
            do {
                let (download, _) = try await fetch(source, loader: loader, coders: coders, validators: nil, progressive: false, work: work)
                return try await decodeAndStore(source, download: download, incremental: nil, cached: nil, loader: loader,
                                                coders: coders, work: work, tracing: tracing)
            } catch where !(error is CancellationError) {
                ImagePipeline.logger.debug("[WebImage] alternative source \(source.urlString) failed: \(error)")
            }
        }
        throw failure
    }

    /// Stages 4 to 6, once a body is in (a 304 to a revalidation of `cached` ends here; the
    /// answer's rules are `Download.isNotModified`'s). A function of its own (never inlined):
    /// an async function's frame is sized for all of its suspension points, and every load
    /// waiting in the loader's queue holds the frame of `load` (Benchmarks/README.md, "Task
    /// memory of a load"). The steps between its suspensions, stages 4 and 5 (`decoded`) and
    /// the delivery (`deliver`), are synchronous functions.
    @inline(never)
    private func decodeAndStore(_ request: LoadRequest, download: Download, incremental: (any IncrementalImageDecoder)?,
                                cached: ImageCacheResult?, loader: any ImageLoader, coders: ImageCoders,
                                work: SharedWork<ImageEvent, SharedResult>, tracing: Bool) async throws -> SharedResult {
        // The body waits for a decode slot: counted by the loader as its transfer ended, or here.
        let waiting = download.response.backlogClaim ?? backlog.claim(download.data.count)
        defer { waiting.release() }
        if try download.isNotModified(revalidating: cached != nil, request), let cached {
            return await notModified(request, cached: cached, response: download.response)
        }

        // 4. Decode, 5. process: one load per core at a time, until its callers are resumed.
        try Task.checkCancellation()
        guard await decodeSlots.acquire() else { throw CancellationError() }
        waiting.release()
        var holdsSlot = true
        defer { if holdsSlot { decodeSlots.release() } }
        let decodeStart = ContinuousClock.now
        let isolated = try await isolatedDecode(request, download: download, incremental: incremental, coders: coders, tracing: tracing)
        let decoded = try decoded(request, download: download, incremental: incremental, isolated: isolated, decodeStart: decodeStart,
                                  loader: loader, coders: coders, tracing: tracing)

        // 6. Store. A cache with synchronous memory takes the image before any caller is resumed
        // (a lock): a call made as soon as one returns finds it there, whatever its options
        // (a call that cannot join this work, such as a plain one after a progressive one,
        // went to the network again). Another `ImageCaching` may suspend: the callers get the
        // image now (unless they wait for the stores) while its memory store runs, and the
        // work stays in the table until it is done, so a caller that joins meanwhile gets the
        // image as a memory hit.
        if decoded.storesFirst { _ = await storeInMemory(request, image: decoded.image, lifetime: decoded.lifetime) }
        let (result, resumed, reservation) = deliver(decoded, request, download: download, work: work)
        if !decoded.storesFirst { _ = await storeInMemory(request, image: decoded.image, lifetime: decoded.lifetime) }
        // The image is in memory; a large one is also in the hands of every caller before the
        // next decode starts (a resumed caller's task may wait behind a burst's jobs, holding
        // the bitmap). With .waitStoreCache the callers wait for the disk: their number, not
        // this slot, bounds what waits.
        await result.waitForPickups(resumed)
        decodeSlots.release()
        holdsSlot = false
        let failure = await storeOnDisk(request, original: decoded.original, image: decoded.image, data: download.data,
                                        derived: decoded.derived, coders: coders, metadata: decoded.metadata.map(StoredMetadata.entry) ?? .stored(nil),
                                        storable: decoded.storable, reservation: reservation)
        // With .waitStoreCache the callers wait for the stores: they learn whether they failed.
        guard let failure else { return result }
        var failed = result.result
        failed.storeFailure = failure
        return SharedResult(failed)
    }

    /// A 304 to a revalidation: the entry's freshness is refreshed, and a disk hit that waited
    /// for this answer goes into memory now.
    @inline(never)
    private func notModified(_ request: LoadRequest, cached: ImageCacheResult, response: ImageLoaderResponse) async -> SharedResult {
        var result = ImageResult(cached, url: request.url)
        if let key = request.cacheKey {
            let refreshed = await refreshEntry(key, stored: cached.extendedData, notModified: response, request)
            let (freshness, lifetime) = memoryTerms(refreshed, request)
            result.freshness = freshness
            if cached.cacheType == .disk, request.settings.respectsHTTPHeaders {
                _ = await storeInMemory(request, image: cached.image, lifetime: lifetime)
            }
        }
        return SharedResult(result)
    }

    /// A decoded and processed image, with what its stores need.
    private struct Decoded {
        let original: Image
        let image: Image
        /// Whether `image` differs from what the bytes decode to (stored apart from the original).
        let derived: Bool
        /// The response's cache metadata; nil when the load neither writes to disk nor follows
        /// the headers (`LoadRequest.Settings.readsResponseMetadata`).
        let metadata: CacheEntryMetadata?
        let storable: Bool
        let freshness: HTTPFreshness?
        let lifetime: Duration?
        /// Whether memory takes the image before the callers are resumed.
        let storesFirst: Bool
    }

    /// Stage 4 in the registry's isolation, when it has one and the registry decodes this body
    /// (no incremental decoder, no context coder for it): the decoded image, thumbnailed; nil
    /// when the body is decoded in this process (`decoded`).
    private func isolatedDecode(_ request: LoadRequest, download: Download, incremental: (any IncrementalImageDecoder)?,
                                coders: ImageCoders, tracing: Bool) async throws -> Image? {
        guard incremental == nil, coders.isolation != nil, !(request.coder?.canDecode(download.data) ?? false) else { return nil }
        do {
            let image = try await traceStage("webimage.decode", tracing) {
                try await coders.decode(download.data, options: request.decodeOptions, context: request.context)
            }
            return try thumbnail(image, request: request)
        } catch let error as ImageError {
            throw Self.decodeFailure(error, request, byteCount: download.data.count)
        }
    }

    /// A decoder's refusal of the body, naming the URL and the byte count.
    private static func decodeFailure(_ error: ImageError, _ request: LoadRequest, byteCount: Int) -> ImageError {
        switch error {
        case .emptyData, .unsupportedFormat, .undecodable, .tooLarge, .animationTooLarge:
            ImageError.decodingFailed(error, source: request.url.absoluteString, byteCount: byteCount)
        default: error
        }
    }

    /// Stages 4 and 5 (synchronous): the body decoded (a failure names the URL and the byte
    /// count) unless `isolated` holds it already, and transformed, with the response's cache
    /// terms. Checks cancellation after each.
    private func decoded(_ request: LoadRequest, download: Download, incremental: (any IncrementalImageDecoder)?, isolated: Image?,
                         decodeStart: ContinuousClock.Instant, loader: any ImageLoader, coders: ImageCoders, tracing: Bool) throws -> Decoded {
        let original: Image
        if let isolated {
            original = isolated
        } else {
            do {
                original = try traceStage("webimage.decode", tracing) { try decode(download.data, request: request, coders: coders, incremental: incremental) }
            } catch let error as ImageError {
                throw Self.decodeFailure(error, request, byteCount: download.data.count)
            }
        }
        metrics.decoded()
        metrics.record(.decode, .now - decodeStart)
        try Task.checkCancellation()
        let transformStart = ContinuousClock.now
        let image = request.transformer == nil ? original : try traceStage("webimage.transform", tracing) { try transform(original, request: request) }
        if request.transformer != nil {
            metrics.transformed()
            metrics.record(.transform, .now - transformStart)
        }
        // Every caller may have left while the transform ran: then nothing of it is stored.
        try Task.checkCancellation()
        let derived = request.isDerived && !(image.isAnimated && !request.options.contains(.transformAnimatedImage) && !request.settings.reducesDecode)
        // A load that writes nothing to disk and ignores the headers reads no cache metadata.
        let (metadata, storable) = request.settings.readsResponseMetadata
            ? metadata(of: download.response, request, loader: loader) : (nil, true)
        let (freshness, lifetime) = memoryTerms(metadata, request)
        return Decoded(original: original, image: image, derived: derived, metadata: metadata, storable: storable,
                       freshness: freshness, lifetime: lifetime, storesFirst: request.settings.hasSynchronousMemory)
    }

    /// The callers waiting now resumed with the loaded image (unless they wait for the stores);
    /// returns the result, how many were resumed, and the background disk write's reservation.
    private func deliver(_ decoded: Decoded, _ request: LoadRequest, download: Download,
                         work: SharedWork<ImageEvent, SharedResult>) -> (SharedResult, resumed: Int, PendingStores.Reservation?) {
        let image = decoded.image
        var loaded = ImageResult(image: image, data: decoded.derived ? nil : download.data, cacheType: .none, url: request.resultURL)
        loaded.sourceURL = request.url
        loaded.measured = download.response.measured
        loaded.freshness = decoded.freshness
        let result = SharedResult(loaded, countsPickups: image.memoryCost >= ImagePipeline.pickupWaitCost)
        // The background disk write is registered before any caller is resumed, so that a
        // `waitForPendingStores()` called as soon as the load returns waits for it.
        let waitsForStores = request.options.contains(.waitStoreCache)
        let reservation = waitsForStores ? nil : pendingStores.reserve(key: decoded.derived ? request.originalKey : nil)
        guard !waitsForStores else { return (result, 0, nil) }
        // Callers that join from now get their own result, never `result`: only the callers
        // resumed here count as its pickups (a late joiner's pickup before the count is set
        // would leave the work waiting for one that never comes).
        let late = request.cacheKey != nil && request.memoryStoreType.includesMemory
            ? SharedResult(ImageResult(image: image, data: result.result.data, cacheType: .memory, url: request.resultURL))
            : SharedResult(result.result)
        // A caller that joined before now but was not yet waiting (the work outran it) is
        // one of the load's callers: it gets the load's result (cacheType .none, not a
        // memory hit), though not counted among the pickups (deliver counts only waiters).
        let early = result.countsPickups ? SharedResult(result.result) : result
        return (result, work.deliver(result, late: late, early: early), reservation)
    }
}

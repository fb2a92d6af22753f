import Foundation
import Logging
import Synchronization

/// The shared part of a load, after the memory cache missed: disk cache, download, decode,
/// transform, store. Runs once per work key however many callers wait for it.
///
/// One file per stage, in the order a load runs them:
///
///     caller ── ImageManager.image(for:) ── admit (synchronous: keys, join a work in flight)
///        │
///        ├─ 1. QueryMemory   memory cache, by the caller itself ──────────────▶ hit: return
///        │
///        └─▶ shared work (SharedWork, one per work key: URL + options + transformer + thumbnail)
///               2. QueryDisk    disk cache (or the cached original of a derived image) ─▶ hit
///               3. FetchData    shared transfer (one per download key) ─▶ progress, previews
///               4. Decode       incremental decoder's image, or a full decode; thumbnail box
///               5. Process      the transformer
///               ── deliver to every caller ──
///               6. Store        memory now, disk in the background (PendingStores)
///
/// Cancellation is checked after every stage: when the last caller leaves, the work's task is
/// cancelled and nothing after the current stage runs, nothing is stored.
struct ImagePipeline: Sendable {
    /// Decode-transform-store works, by work key.
    let works = InFlightTable<LoadPlan.WorkKey, ImageEvent, SharedResult>()
    /// Transfers, by download key.
    let downloads = InFlightTable<LoadPlan.DownloadKey, DownloadEvent, Download>()
    let shouldDownload: (@Sendable (URL) -> Bool)?
    /// Disk writes running in the background, so that they can be awaited.
    let pendingStores = PendingStores()
    static let logger = Logger(label: "WebImage.ImageManager")

    /// The body of a finished transfer.
    struct Download: Sendable {
        var data: Data
        var response: ImageLoaderResponse
    }

    /// What a shared transfer reports to the works that wait for it.
    enum DownloadEvent: Sendable {
        case progress(ImageProgress)
        case data(Data)
    }

    func run(_ plan: LoadPlan, onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> SharedResult {
        try await works.run(plan.workKey, onEvent: onEvent) { work in
            try await load(plan, work: work)
        }
    }

    func cancelAll() {
        works.cancelAll()
        downloads.cancelAll()
    }

    func counts() -> (loads: Int, downloads: Int) { (works.count, downloads.count) }

    // MARK: - Stages

    func load(_ plan: LoadPlan, work: SharedWork<ImageEvent, SharedResult>) async throws -> SharedResult {
        let options = plan.options
        // 2. Disk (the manager looked in memory).
        let cached: ImageCacheResult?
        switch try await queryDisk(plan) {
        case .hit(let result): return result
        case .miss(let entry): cached = entry
        }
        if options.contains(.fromCacheOnly) {
            if let cached { return SharedResult(ImageResult(cached, url: plan.url)) }
            throw ImageError.notInCache(key: plan.cacheKey ?? plan.url.absoluteString)
        }
        if let shouldDownload, !shouldDownload(plan.url) {
            if let cached { return SharedResult(ImageResult(cached, url: plan.url)) }
            throw ImageError.downloadNotAllowed(plan.url)
        }
        try Task.checkCancellation()
        // 3. Data. Refreshing: the callers watching events see the cached image before the network answers.
        if let cached, options.contains(.refreshCached) { work.send(.cached(ImageResult(cached, url: plan.url))) }

        // Download (shared), with previews when asked.
        let validators: CacheValidators?
        if let stored = cached?.extendedData {
            validators = CacheValidators(stored: stored)
        } else {
            validators = nil
        }
        let progressive = options.contains(.progressiveLoad) && !options.contains(.avoidDecodeImage)
        let (download, incremental) = try await fetch(plan, validators: validators, progressive: progressive, work: work)
        if download.response.statusCode == 304, let cached {
            return SharedResult(ImageResult(cached, url: plan.url))
        }
        guard download.response.statusCode != 304 else { throw ImageError.badStatusCode(304, url: plan.url) }
        guard !download.data.isEmpty else { throw ImageError.decodingFailed(.emptyData, source: plan.url.absoluteString, byteCount: 0) }

        // 4. Decode (a failure names the URL and the byte count), 5. process.
        try Task.checkCancellation()
        let original: Image
        do { original = try decode(download.data, plan: plan, incremental: incremental) } catch let error as ImageError {
            switch error {
            case .emptyData, .unsupportedFormat, .undecodable, .tooLarge:
                throw ImageError.decodingFailed(error, source: plan.url.absoluteString, byteCount: download.data.count)
            default: throw error
            }
        }
        try Task.checkCancellation()
        let image = try transform(original, plan: plan)
        // Every caller may have left while the transform ran: then nothing of it is stored.
        try Task.checkCancellation()
        let derived = plan.isDerived && !(image.isAnimated && !options.contains(.transformAnimatedImage) && plan.context.thumbnailPixelSize == nil)

        // 6. Store. The callers get the image now (unless they wait for the store); the work stays in the
        // table until the memory store is done, so a caller arriving meanwhile joins it.
        let result = SharedResult(ImageResult(image: image, data: derived ? nil : download.data, cacheType: .none, url: plan.url))
        // The background disk write is registered before any caller is resumed, so that a
        // `waitForPendingStores()` called as soon as the load returns waits for it (even while
        // a slow memory store still runs before the write starts).
        let reservation = options.contains(.waitStoreCache) ? nil : pendingStores.reserve()
        if !options.contains(.waitStoreCache) { work.deliver(result) }
        await store(plan, original: original, image: image, data: download.data, derived: derived,
                    validators: CacheValidators(headers: download.response.headers), reservation: reservation)
        return result
    }
}

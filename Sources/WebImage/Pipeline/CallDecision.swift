import Foundation

/// What a call does, decided once, synchronously, by `ImageManager.decide` for every image
/// entry point (`image(for:)`, `result(for:)`, `events(for:)`).
@usableFromInline
enum CallDecision: Sendable {
    /// The image, from memory, answered without suspending.
    case hit(Image)
    /// The call is subscriber `id` of `work`, the shared work of its key, joined or started.
    /// `request` is the call's request, or for a plain call that found the work by its alias,
    /// the request of the plain call that made it (the same one: plain calls of a URL differ
    /// in nothing).
    case subscribed(SharedWork<ImageEvent, SharedResult>, id: Int, LoadRequest)
    /// The call has interceptors or an image modifier: they run around its load
    /// (`ImageManager.performHooked`), which is decided then.
    case hooked(CallHooks)
}

/// What every plain call of a manager (no options and no context of its own, no options
/// processor) decides, read once off a template request built with the manager's defaults:
/// such calls differ only by URL, so a memory hit or a join needs no request of their own.
/// Nothing here is listed by hand: the template answers with the same rules as any request.
/// A class: a memory hit reads four of its fields, and a struct of a whole request would be
/// copied out of the manager for that.
final class PlainCalls: Sendable {
    /// The request of a plain call of `plain:template`; everything but the URL holds for every
    /// plain call.
    let template: LoadRequest
    /// Whether a plain call's memory hit is one synchronous look-up under its URL: its key is
    /// the URL string (no key filter, no suffix), and the request answers memory hits at once.
    let hitsByURL: Bool
    /// The template's cache, options and first-frame rule, read once for the memory hit.
    let cache: any ImageCaching
    let options: ImageOptions
    let firstFrameOnly: Bool

    /// The plain calls of a manager with `configuration` whose defaults decide `settings`; nil
    /// when an options processor may make each call different, or when every call has `hooks`.
    init?(_ configuration: ImageManager.Configuration, settings: LoadRequest.Settings, hooks: CallHooks?) {
        guard configuration.optionsProcessor == nil, hooks == nil else { return nil }
        let url = URL(string: "plain:template")!
        template = LoadRequest(url: url, urlString: url.absoluteString, options: configuration.defaultOptions, settings: settings,
                               isShareable: true, isPlain: true)
        hitsByURL = settings.keyFilter == nil && template.cacheKey == template.urlString && template.queriesMemory
            && template.answersMemoryAtOnce
        cache = template.cache
        options = template.options
        firstFrameOnly = template.decodeOptions.firstFrameOnly
    }
}

extension ImageManager {
    /// The one decision of an image call: answered from memory, or subscribed to the shared
    /// work of its key, joined when in flight, else started (`subscribe`). Checks
    /// cancellation, the URL and the failed-URL list first. A plain call is answered off the
    /// manager's template (`PlainCalls`) before it builds a request: a memory hit by URL, or
    /// the work in flight found by the URL's alias key; a plain miss then subscribes with the
    /// template's settings without asking again. Otherwise, as every call, it builds its
    /// request and asks memory, then the in-flight table.
    /// `onEvent` makes the subscriber's event handler, asked for only when the call subscribes
    /// (a memory hit has no subscription and makes none; it may be asked twice, for a join
    /// then a start, and gives the same handler). A call with hooks (`runsHooks`) is decided
    /// as `.hooked` before anything else but the plain template, which a manager with default
    /// hooks does not have.
    /// Synchronous, and inlined into `decideAccounted`, its only caller: it pays on a memory hit
    /// (Benchmarks/README.md, "The `@inline` attributes that remain").
    @inline(__always)
    func decide(_ url: URL, options: ImageOptions, context: ImageContext,
                onEvent: () -> (@Sendable (ImageEvent) -> Void)?, runsHooks: Bool) throws -> CallDecision {
        try Task.checkCancellation()
        let string = url.absoluteString
        if options.isEmpty, context.isEmpty, let plain {
            try checkFailedURL(url, plain.options)
            if plain.hitsByURL, let image = memoryHit(string, plain.cache, plain.options, firstFrameOnly: plain.firstFrameOnly, url: url) {
                // Only a string with a scheme is a URL (an entry may be stored under any key).
                guard URLScheme.isPresent(in: string) else { throw ImageError.invalidURL(string) }
                return .hit(image)
            }
            // A work found under this alias was made by a plain call of this very string, which
            // passed every check below.
            if plain.template.queriesMemory, !pipeline.works.isEmpty,
               let joined = pipeline.works.joinIfRunning(WorkKey(plainURL: string), priority: { $0.request.callerPriority }, onEvent: onEvent()) {
                return joinedWork(joined.work, id: joined.id, joined.key.request)
            }
            if plain.hitsByURL {
                // Missed: the failed-URL list and memory were asked; the request is the template's
                // settings for this URL, and `subscribe` joins a work of its key or starts one.
                guard URLScheme.isPresent(in: string) else { throw ImageError.invalidURL(string) }
                let request = makeRequest(url, string, options: options, context: context)
                return subscribe(request, loader: try loader(for: request), onEvent: onEvent())
            }
        }
        if runsHooks, let hooks = hooks(for: context) { return .hooked(hooks) }
        let request = try checkedRequest(url, string, options: options, context: context)
        if request.queriesMemory, let key = request.cacheKey {
            if request.answersMemoryAtOnce,
               let image = memoryHit(key, request.cache, request.options, firstFrameOnly: request.decodeOptions.firstFrameOnly, url: url) {
                return .hit(image)
            }
            if !pipeline.works.isEmpty,
               let joined = pipeline.works.joinIfRunning(WorkKey(request), priority: { _ in request.callerPriority }, onEvent: onEvent()) {
                return joinedWork(joined.work, id: joined.id, request)
            }
        }
        return subscribe(request, loader: try loader(for: request), onEvent: onEvent())
    }

    /// The request of a call that is not answered off the plain template, checked as every
    /// entry point checks it: a URL with a scheme (only such a string is a URL), not on the
    /// failed list unless the call retries failed URLs.
    func checkedRequest(_ url: URL, _ string: String, options: ImageOptions, context: ImageContext) throws -> LoadRequest {
        guard URLScheme.isPresent(in: string) else { throw ImageError.invalidURL(string) }
        let request = makeRequest(url, string, options: options, context: context)
        try checkFailedURL(url, request.options)
        return request
    }

    /// The loader of a call that runs: a URL that none loads is invalid (not a failure of the
    /// URL's server, so never blacklisted).
    func loader(for request: LoadRequest) throws -> any ImageLoader {
        guard let loader = loaders.loader(request.loader, for: request.url) else { throw ImageError.invalidURL(request.urlString) }
        return loader
    }

    /// Fails a call of a blacklisted URL, unless its options retry failed URLs.
    func checkFailedURL(_ url: URL, _ options: ImageOptions) throws {
        if !options.contains(.retryFailed), failedURLs.contains(url) { throw ImageError.blacklistedURL(url) }
    }

    /// The image in `cache`'s memory under `key`, as a request with `options` would be given it
    /// (a still when it decodes the first frame only), answered without suspending; a hit with
    /// `.retryFailed` takes the URL off the failed list.
    private func memoryHit(_ key: String, _ cache: any ImageCaching, _ options: ImageOptions, firstFrameOnly: Bool, url: URL) -> Image? {
        guard let image = cache.cachedImage(forKey: key) else { return nil }
        if options.contains(.retryFailed) { failedURLs.remove(url) }
        return firstFrameOnly ? image.matching(ImageDecodingOptions(firstFrameOnly: true)) : image
    }

    /// A caller that joined `work`: its priority followed, its trace linked.
    private func joinedWork(_ work: SharedWork<ImageEvent, SharedResult>, id: Int, _ request: LoadRequest) -> CallDecision {
        followPriority(of: request, in: work, id: id)
        pipeline.spans.joined(work)
        return .subscribed(work, id: id, request)
    }

    /// The call's options and context merged over the defaults into one `LoadRequest` (no
    /// check: see `decide`).
    func makeRequest(_ url: URL, _ string: String, options callOptions: ImageOptions, context callContext: ImageContext) -> LoadRequest {
        var options = configuration.defaultOptions.isEmpty ? callOptions : callOptions.union(configuration.defaultOptions)
        let settings: LoadRequest.Settings, isShareable: Bool
        if let processor = configuration.optionsProcessor {
            var context = callContext.isEmpty ? defaults : callContext.merged(over: defaults)
            (options, context) = processor(url, options, context)
            (settings, isShareable) = (LoadRequest.Settings(context, cache: cache), callContext.isShareable)
        } else if callContext.isEmpty {
            (settings, isShareable) = (defaultSettings, true)
        } else {
            (settings, isShareable) = callContext.settings(for: contextOwner) { context in
                (LoadRequest.Settings(context.merged(over: defaults), cache: cache), context.isShareable)
            }
        }
        return LoadRequest(url: url, urlString: string, options: options, settings: settings, isShareable: isShareable,
                           isPlain: callOptions.isEmpty && callContext.isEmpty && configuration.optionsProcessor == nil)
    }

    /// The memory cache asked by suspending (a cache without synchronous memory, or a hit that
    /// also reads its data from disk): the hit as `request` would be given it, or nil. Only a
    /// memory hit answers here (its data read from disk for `.queryMemoryData`): a disk entry is
    /// the disk stage's, which checks its freshness first.
    func queryMemory(_ request: LoadRequest) async -> ImageResult? {
        guard let key = request.cacheKey else { return nil }
        var query = ImageCacheQuery(scope: .memory, options: request.decodeOptions, storeType: request.memoryStoreType)
        query.context = request.context
        guard var hit = await request.cache.image(forKey: key, query: query) else { return nil }
        if request.options.contains(.queryMemoryData), request.queryType.includesDisk, hit.data == nil {
            hit.data = await request.cache.data(forKey: key)
        }
        if request.options.contains(.retryFailed) { failedURLs.remove(request.url) }
        hit.image = hit.image.matching(request.decodeOptions)
        return ImageResult(hit, url: request.url)
    }
}

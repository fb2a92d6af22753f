import Foundation

/// What an image call ends with: a memory hit, or the result of a shared work (by reference:
/// the outcome is held in the async frame of every waiting caller).
@usableFromInline
enum LoadOutcome: Sendable {
    case memory(Image)
    case shared(SharedResult)

    /// The image alone (what `image(for:)` returns: one reference, not a whole result copied).
    @inlinable
    var image: Image {
        switch self {
        case .memory(let image): image
        case .shared(let shared): shared.result.image
        }
    }

    /// The whole result; a memory hit's names `url`.
    @usableFromInline
    func result(_ url: URL) -> ImageResult {
        switch self {
        case .memory(let image): ImageResult(image: image, data: nil, cacheType: .memory, url: url)
        case .shared(let shared): shared.result
        }
    }
}

/// The one wait of every call and its one bookkeeping: the deadline, the failed-URL list, the
/// counts and the lifecycle events, for `image(for:)`, `result(for:)`, `events(for:)` and
/// `data(for:)` alike.
extension ImageManager {
    /// An image call, top to bottom: decide (a memory hit, or a subscription to the shared work,
    /// joined or started), then wait on the subscription within the call's deadline, then the
    /// bookkeeping. A call with interceptors or an image modifier runs them around its load
    /// (`performHooked`), which is this same call made again without them (`runsHooks` false).
    /// Inlinable with `image(for:)` and `result(for:)`: a memory hit is one synchronous call
    /// (`decideAccounted`) that the caller's own code can make.
    @inlinable
    nonisolated(nonsending) func perform(_ url: URL, options: ImageOptions, context: ImageContext,
                                         onEvent: (@Sendable (ImageEvent) -> Void)?, runsHooks: Bool = true) async throws -> LoadOutcome {
        switch try decideAccounted(url, options: options, context: context, onEvent: { onEvent }, runsHooks: runsHooks) {
        case .hit(let image):
            return .memory(image)
        case .subscribed(let work, let id, let request):
            return .shared(try await waitForImage(work, id, request, context: context))
        case .hooked(let hooks):
            return try await performHooked(url, options: options, context: context, onEvent: onEvent, hooks: hooks) { [self] request, onEvent in
                try await perform(request.url, options: request.options, context: request.context, onEvent: onEvent, runsHooks: false)
            }
        }
    }

    /// `decide`, with a failure or a memory hit accounted.
    @usableFromInline
    func decideAccounted(_ url: URL, options: ImageOptions, context: ImageContext,
                         onEvent: () -> (@Sendable (ImageEvent) -> Void)?, runsHooks: Bool = true) throws -> CallDecision {
        let decision = try accounted(url) { try decide(url, options: options, context: context, onEvent: onEvent, runsHooks: runsHooks) }
        if case .hit = decision { succeeded(url, .memory) }
        return decision
    }

    /// `decision`'s value; a failure (a cancelled caller, an invalid or blacklisted URL) is
    /// counted and told to the lifecycle watchers before it is thrown. The decision of every
    /// entry point, `data(for:)` included.
    func accounted<Decision>(_ url: URL, _ decision: () throws -> Decision) throws -> Decision {
        do {
            return try decision()
        } catch {
            failed(url, error)
            throw error
        }
    }

    /// `waitOn` for an image call. Not generic, and called from `perform` (inlinable into the
    /// callers of `image(for:)`): an inlinable function can only call a generic one
    /// unspecialized, and this one's body is specialized.
    @usableFromInline
    nonisolated(nonsending) func waitForImage(_ work: SharedWork<ImageEvent, SharedResult>, _ id: Int, _ request: LoadRequest,
                                              context: ImageContext) async throws -> SharedResult {
        try await waitOn(work, id, request, context: context)
    }

    /// The one wait of every call that did not hit memory (`image(for:)`, `result(for:)`,
    /// `events(for:)` and `data(for:)`): subscriber `id` of `work` waits for its output, its
    /// deadline (the call's time limit) scheduled on the manager's one timer; then the
    /// bookkeeping, a failure (`failed(_:_:)`) or a success (`settled(_:_:)`).
    nonisolated(nonsending) func waitOn<Event, Output: LoadOutput>(_ work: SharedWork<Event, Output>, _ id: Int, _ request: LoadRequest,
                                                                   context: ImageContext) async throws -> Output {
        var deadline: Int?
        if let limit = loadTimeout(context) { deadline = scheduleDeadline(limit, work, id, request.url) }
        let output: Output
        do {
            output = try await work.wait(id)
        } catch {
            throw failed(request, deadline == nil ? error : deadlineError(error, deadline, request.url))
        }
        if let deadline { pipeline.deadlines.cancel(deadline) }
        return settled(request, output)
    }

    /// Schedules the time-out of subscriber `id`, `limit` from now: then the subscriber leaves
    /// `work` with `ImageError.timedOut` and the work goes on for the others (or stops, when
    /// none is left). Returns the deadline's token.
    func scheduleDeadline<Event, Output>(_ limit: Duration, _ work: SharedWork<Event, Output>, _ id: Int, _ url: URL) -> Int {
        pipeline.deadlines.schedule(at: .now + limit) { [weak work] in
            work?.expire(id, with: ImageError.timedOut(url: url))
        }
    }

    /// The error of a call with a deadline whose wait threw `error`: a subscriber that timed
    /// out before it waited finds itself gone (a `CancellationError`); its deadline says which.
    func deadlineError(_ error: any Error, _ deadline: Int?, _ url: URL) -> any Error {
        guard let deadline, !pipeline.deadlines.cancel(deadline), error is CancellationError, !Task.isCancelled else { return error }
        return ImageError.timedOut(url: url)
    }

    /// The shared work of `request`, joined or started, and this caller's subscription to it
    /// (`decide`'s last step). Works wait for their start in the order of the loader's own
    /// queue; a request that asks its cache's memory by suspending (a cache without synchronous
    /// memory, or a hit that also wants its data) asks it as the work's first stage, before
    /// the work waits for admission: the work, not each caller, asks it once.
    func subscribe(_ request: LoadRequest, loader: any ImageLoader, onEvent: (@Sendable (ImageEvent) -> Void)?) -> CallDecision {
        let (coders, pipeline) = (self.coders, self.pipeline)
        let trace = WorkSpans.creatorContext()
        let first: (@Sendable () async -> SharedResult?)? = request.queriesMemory && !request.answersMemoryAtOnce
            ? { @Sendable [self] in await queryMemory(request).map { SharedResult($0) } } : nil
        let (work, id, isNew) = pipeline.works.join(
            WorkKey(request), alias: request.isPlain && request.queriesMemory ? WorkKey(plainURL: request.urlString) : nil,
            priority: request.callerPriority, taskPriority: Task.currentPriority,
            lifo: loader.capabilities.contains(.startsNewestFirst), first: first, onEvent: onEvent) { work in
            try await pipeline.load(request, loader: loader, coders: coders, work: work, trace: trace)
        }
        followPriority(of: request, in: work, id: id)
        if !isNew { pipeline.spans.joined(work) }
        return .subscribed(work, id: id, request)
    }

    /// A caller that gave a priority handle moves its subscription when the handle changes.
    func followPriority<Event, Output>(of request: LoadRequest, in work: SharedWork<Event, Output>, id: Int) {
        guard let handle = request.settings.priorityHandle else { return }
        handle.observe { [weak work] handle in work?.setPriority(id, to: handle.value) }
        work.setPriority(id, to: handle.value)   // a change since the join
    }

    /// The call's time limit: its context's, else the configuration's; nil: none.
    func loadTimeout(_ context: ImageContext) -> Duration? {
        context.isEmpty ? defaultLoadTimeout : context.loadTimeout ?? defaultLoadTimeout
    }

    // MARK: - Bookkeeping

    /// A call that waited succeeded, from `source`: a success with `.retryFailed` takes the URL
    /// off the failed list; the counts and the lifecycle watchers are told.
    func settled(_ request: LoadRequest, source: ImageCacheType) {
        if request.options.contains(.retryFailed) { failedURLs.remove(request.url) }
        succeeded(request.url, source)
    }

    /// A call that waited got `output`: its pickup counted, then `settled(_:source:)`.
    func settled<Output: LoadOutput>(_ request: LoadRequest, _ output: Output) -> Output {
        output.pickedUp()
        settled(request, source: output.source)
        return output
    }

    /// A call that waited failed with `error`: a permanent failure blacklists the URL (unless
    /// the call retries failed URLs); the counts and the lifecycle watchers are told. Returns
    /// the error to throw.
    func failed(_ request: LoadRequest, _ error: any Error) -> any Error {
        let block = configuration.shouldBlockFailedURL?(request.url, error) ?? ImageManager.isPermanentFailure(error)
        if block, !request.options.contains(.retryFailed) { failedURLs.insert(request.url) }
        failed(request.url, error)
        return error
    }

    /// Counts a finished call and tells the lifecycle watchers. Inlined: it pays on a memory
    /// hit (Benchmarks/README.md, "The `@inline` attributes that remain").
    @inline(__always)
    func succeeded(_ url: URL, _ source: ImageCacheType) {
        pipeline.metrics.loaded(from: source)
        pipeline.events.send(.loadFinished(url, source: source))
    }

    /// Counts a failed call and tells the lifecycle watchers.
    func failed(_ url: URL, _ error: any Error) {
        pipeline.metrics.failed(error)
        pipeline.events.send(.loadFailed(url, error: error))
    }
}

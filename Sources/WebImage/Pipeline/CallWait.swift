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
    /// An image call: decided once (`decide`), then answered or waited for, and accounted.
    /// Inlined into its caller through `image(for:)` and `result(for:)`: a memory hit is one
    /// synchronous call (`decideAccounted`), and the call allocates no async frame of its own.
    @inlinable @inline(__always)
    nonisolated(nonsending) func perform(_ url: URL, options: ImageOptions, context: ImageContext,
                                         onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> LoadOutcome {
        let decision = try decideAccounted(url, options: options, context: context, onEvent: onEvent)
        if case .hit(let image) = decision { return .memory(image) }
        return .shared(try await waitFor(decision, url: url, context: context, onEvent: onEvent))
    }

    /// The wait of a call that did not hit memory, with its bookkeeping. A caller that joined a
    /// work and has no deadline waits in this frame; every other wait (a deadline, a memory
    /// query that suspends, a new work) is one call away, in `waitOutOfLine`: a joined caller's
    /// frames then fit its task's first slab of task memory (with the other waits inlined, each
    /// of a thousand joined callers allocated one more slab).
    @usableFromInline
    nonisolated(nonsending) func waitFor(_ decision: CallDecision, url: URL, context: ImageContext,
                                         onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> SharedResult {
        switch decision {
        case .join(let work, let id, let request) where !hasDeadline(context):
            let shared: SharedResult
            do { shared = try await work.wait(id) } catch { throw failed(request, error) }
            return settled(request, shared)
        default:
            return try await waitOutOfLine(decision, url: url, context: context, onEvent: onEvent)
        }
    }

    /// `decide`, with a failure or a memory hit accounted.
    @usableFromInline
    func decideAccounted(_ url: URL, options: ImageOptions, context: ImageContext,
                                 onEvent: (@Sendable (ImageEvent) -> Void)?) throws -> CallDecision {
        let decision = try accounted(url) { try decide(url, options: options, context: context, onEvent: onEvent) }
        if case .hit = decision { succeeded(url, .memory) }
        return decision
    }

    /// `decision`'s value; a failure (a cancelled caller, an invalid or blacklisted URL) is
    /// counted and told to the lifecycle watchers before it is thrown. The decision of every
    /// entry point, `data(for:)` included.
    @inline(__always)
    func accounted<Decision>(_ url: URL, _ decision: () throws -> Decision) throws -> Decision {
        do {
            return try decision()
        } catch {
            failed(url, error)
            throw error
        }
    }

    /// Whether the call has a time limit (its context's, else the manager's). Never inlined:
    /// reading the context inline put a copy of its storage in the caller's async frame.
    @inline(never)
    private func hasDeadline(_ context: ImageContext) -> Bool { loadTimeout(context) != nil }

    /// The wait of a call that starts (or joins) the shared work, or has a deadline, with its
    /// bookkeeping.
    @inline(never)
    private func waitOutOfLine(_ decision: CallDecision, url: URL, context: ImageContext,
                               onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> SharedResult {
        try await accountedWait(decision.request, context: context) { try await self.wait(decision, onEvent: onEvent) }
    }

    /// The one wait of every call that did not hit memory (`image(for:)`, `result(for:)`,
    /// `events(for:)` and `data(for:)`; a joined image call without a deadline does the same in
    /// `waitFor`'s frame): `wait` within the call's time limit, then its bookkeeping, a failure
    /// (`failed(_:_:)`) or a success (`settled(_:_:)`).
    func accountedWait<Output: LoadOutput>(_ request: LoadRequest, context: ImageContext,
                                           _ wait: @escaping @Sendable () async throws -> Output) async throws -> Output {
        let output: Output
        do {
            if let limit = loadTimeout(context) {
                output = try await withDeadline(limit, request.url, wait)
            } else {
                output = try await wait()
            }
        } catch {
            throw failed(request, error)
        }
        return settled(request, output)
    }

    /// Waits for what `decision` joined or starts: the work's result, or a memory hit asked by
    /// suspending, then the work.
    private func wait(_ decision: CallDecision, onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> SharedResult {
        switch decision {
        case .join(let work, let id, _):
            return try await work.wait(id)
        case .start(let new):
            if new.queriesMemoryFirst {
                if let hit = await queryMemory(new.request) { return SharedResult(hit) }
                try Task.checkCancellation()
            }
            return try await run(new.request, loader: new.loader, onEvent: onEvent)
        case .hit:
            preconditionFailure("a memory hit is answered by the caller")
        }
    }

    /// Joins or starts the shared work of `request` (disk, download, decode, transform, store)
    /// and waits for it.
    private func run(_ request: LoadRequest, loader: any ImageLoader, onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> SharedResult {
        let (work, id) = joinOrStart(request, loader: loader, onEvent: onEvent)
        return try await work.wait(id)
    }

    /// The shared work of `request`, joined or started, and this caller's subscription to it.
    /// Works wait for their start in the order of the loader's own queue. Synchronous and
    /// apart from `run`: the work's body and the join stay out of the frame every waiting
    /// caller keeps.
    @inline(never)
    private func joinOrStart(_ request: LoadRequest, loader: any ImageLoader,
                             onEvent: (@Sendable (ImageEvent) -> Void)?) -> (SharedWork<ImageEvent, SharedResult>, Int) {
        let (coders, pipeline) = (self.coders, self.pipeline)
        let trace = WorkSpans.creatorContext()
        let (work, id, isNew) = pipeline.works.join(
            WorkKey(request), alias: request.isPlain && request.queriesMemory ? WorkKey(plainURL: request.urlString) : nil,
            priority: request.callerPriority, taskPriority: Task.currentPriority,
            lifo: loader.capabilities.contains(.startsNewestFirst), onEvent: onEvent) { work in
            try await pipeline.load(request, loader: loader, coders: coders, work: work, trace: trace)
        }
        followPriority(of: request, in: work, id: id)
        if !isNew { pipeline.spans.joined(work) }
        return (work, id)
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

    /// `body`, failing with `ImageError.timedOut(url:)` when it takes longer than `limit`: it
    /// runs as a child task, cancelled then (a waiting caller leaves its work as a cancelled
    /// caller does). Never inlined: its task group's state would be in the frame of every call,
    /// with a deadline or not.
    @inline(never)
    func withDeadline<Output: Sendable>(_ limit: Duration, _ url: URL,
                                        _ body: @escaping @Sendable () async throws -> Output) async throws -> Output {
        do {
            return try await withThrowingTaskGroup(of: Output?.self) { group in
                group.addTask { try await body() }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let output = first else { throw DeadlinePassed() }
                return output
            }
        } catch is DeadlinePassed {
            throw ImageError.timedOut(url: url)
        }
    }

    // MARK: - Bookkeeping

    /// A call that waited succeeded, from `source`: a success with `.retryFailed` takes the URL
    /// off the failed list; the counts and the lifecycle watchers are told.
    func settled(_ request: LoadRequest, source: ImageCacheType) {
        if request.options.contains(.retryFailed) { failedURLs.remove(request.url) }
        succeeded(request.url, source)
    }

    /// A call that waited got `output`: its pickup counted, then `settled(_:source:)`.
    @inline(never)
    func settled<Output: LoadOutput>(_ request: LoadRequest, _ output: Output) -> Output {
        output.pickedUp()
        settled(request, source: output.source)
        return output
    }

    /// A call that waited failed with `error`: a permanent failure blacklists the URL (unless
    /// the call retries failed URLs); the counts and the lifecycle watchers are told. Returns
    /// the error to throw.
    @inline(never)
    func failed(_ request: LoadRequest, _ error: any Error) -> any Error {
        let block = configuration.shouldBlockFailedURL?(request.url, error) ?? ImageManager.isPermanentFailure(error)
        if block, !request.options.contains(.retryFailed) { failedURLs.insert(request.url) }
        failed(request.url, error)
        return error
    }

    /// Counts a finished call and tells the lifecycle watchers.
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

/// A call's deadline passed before its result (see `ImageManager.withDeadline`).
private struct DeadlinePassed: Error {}

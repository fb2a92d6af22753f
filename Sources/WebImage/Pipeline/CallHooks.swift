import Foundation

/// What a call runs around its load: the interceptors (the configuration's, then the call's
/// context's, else the default context's) and the image modifier. Nil for a call with neither,
/// which is then the load alone.
@usableFromInline
final class CallHooks: Sendable {
    let interceptors: [any ImageInterceptor]
    let modifier: ImageModifier?

    /// The hooks of a call whose context asks for `interceptors` and `modifier` on a manager
    /// configured with `configured`; nil when there are none.
    init?(configured: [any ImageInterceptor], interceptors: [any ImageInterceptor]?, modifier: ImageModifier?) {
        let all = configured + (interceptors ?? [])
        guard !all.isEmpty || modifier != nil else { return nil }
        self.interceptors = all
        self.modifier = modifier
    }
}

extension ImageManager {
    /// The hooks of a call with `context` (see `CallHooks`); a call with no context of its own
    /// has the defaults', worked out once.
    func hooks(for context: ImageContext) -> CallHooks? {
        if context.isEmpty { return defaultHooks }
        let (interceptors, modifier) = (context.interceptors, context.imageModifier)
        if defaultHooks == nil, interceptors == nil, modifier == nil { return nil }
        return CallHooks(configured: configuration.interceptors, interceptors: interceptors ?? defaults.interceptors,
                         modifier: modifier ?? defaults.imageModifier)
    }

    /// A call with `hooks`: its interceptors in order around `load` (the call's own load, given
    /// the request as the last interceptor passed it), then the modifier on the image handed
    /// out, and on a cached image sent first with `.refreshCached`.
    @usableFromInline
    nonisolated(nonsending) func performHooked(
        _ url: URL, options: ImageOptions, context: ImageContext, onEvent: (@Sendable (ImageEvent) -> Void)?, hooks: CallHooks,
        load: @escaping @Sendable (ImageRequest, (@Sendable (ImageEvent) -> Void)?) async throws -> LoadOutcome
    ) async throws -> LoadOutcome {
        let modifier = hooks.modifier
        let events: (@Sendable (ImageEvent) -> Void)? = if let modifier, let onEvent {
            { event in onEvent(event.modified(by: modifier)) }
        } else {
            onEvent
        }
        let request = ImageRequest(url: url, options: options, context: context)
        var result = try await ImageInterceptorChain.run(request, through: hooks.interceptors) { request in
            try await load(request, events).result(request.url)
        }
        if let modifier { result.image = modifier.modify(result.image) }
        return .shared(SharedResult(result))
    }

    /// The task of a call with `hooks`: the hooked call runs in the task's own waiting task,
    /// and the subscription its load makes is the task's (so that `priority` and `cancel()`
    /// reach it).
    @usableFromInline
    func hookedTask(_ url: URL, options: ImageOptions, context: ImageContext, hooks: CallHooks) -> ImageTask {
        let live = LiveImageTask(url: url)
        live.setInitialPriority(priority(of: options))
        live.run { [self] in
            try await performHooked(url, options: options, context: context, onEvent: live.eventHandler, hooks: hooks) { [self] request, onEvent in
                try await taskLoad(live, request, onEvent: onEvent)
            }
        }
        return ImageTask(url: url, .live(live))
    }

    /// The load of a task's hooked call: `perform`'s, with the subscription handed to `live`.
    private nonisolated(nonsending) func taskLoad(_ live: LiveImageTask, _ request: ImageRequest,
                                                  onEvent: (@Sendable (ImageEvent) -> Void)?) async throws -> LoadOutcome {
        switch try decideAccounted(request.url, options: request.options, context: request.context, onEvent: { onEvent }, runsHooks: false) {
        case .hit(let image):
            return .memory(image)
        case .subscribed(let work, let id, let loadRequest):
            live.attach(work, id: id, priority: loadRequest.callerPriority)
            return .shared(try await waitForImage(work, id, loadRequest, context: request.context))
        case .hooked:
            preconditionFailure("a call decided without its hooks")
        }
    }
}

extension ImageEvent {
    /// The event with its image changed by `modifier` where it is one handed out (the cached
    /// image of `.refreshCached`, the final one); progress and previews as they are.
    func modified(by modifier: ImageModifier) -> ImageEvent {
        switch self {
        case .cached(var result):
            result.image = modifier.modify(result.image)
            return .cached(result)
        case .finished(var result):
            result.image = modifier.modify(result.image)
            return .finished(result)
        case .progress, .preview:
            return self
        }
    }
}

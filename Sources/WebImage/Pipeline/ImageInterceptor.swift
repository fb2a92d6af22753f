import Foundation

/// A step around every image call of a manager (Coil's `Interceptor`): it sees the call's
/// request and the rest of the chain, and may change the request before passing it on, answer
/// without loading, or map the result that comes back.
///
/// ```swift
/// struct Placeholder: ImageInterceptor {
///     func intercept(_ chain: ImageInterceptorChain) async throws -> ImageResult {
///         if chain.request.url.host == "blocked.example" { return ImageResult(image: blank, data: nil, cacheType: .none, url: chain.request.url) }
///         return try await chain.proceed(chain.request)
///     }
/// }
/// ```
///
/// Interceptors run in order, the configuration's (`ImageManager.Configuration.interceptors`)
/// around the call's (`ImageContext.interceptors`); the last step is the call itself (memory,
/// disk, loader), so an interceptor runs before the memory cache is asked. They wrap
/// `image(for:)`, `result(for:)`, `events(for:)` and `imageTask(for:)`; `data(for:)`, which makes
/// no image, passes none.
public protocol ImageInterceptor: Sendable {
    /// This step of the call: `chain.proceed(_:)` runs the rest; not calling it answers the call.
    /// - Throws: what the call should fail with.
    func intercept(_ chain: ImageInterceptorChain) async throws -> ImageResult
}

/// What an image call asks for, as interceptors see and change it.
public struct ImageRequest: Sendable {
    /// The URL to load.
    public var url: URL
    /// The call's options.
    public var options: ImageOptions
    /// The call's context. Its `interceptors` are read once, when the call starts: changing
    /// them here changes nothing.
    public var context: ImageContext

    /// A request for `url` with `options` and `context`.
    public init(url: URL, options: ImageOptions = [], context: ImageContext = .init()) {
        self.url = url
        self.options = options
        self.context = context
    }
}

/// The rest of an image call, as one interceptor sees it (Coil's `Interceptor.Chain`).
public struct ImageInterceptorChain: Sendable {
    /// The request as the previous step passed it.
    public let request: ImageRequest
    private let interceptors: [any ImageInterceptor]
    private let next: Int
    private let load: @Sendable (ImageRequest) async throws -> ImageResult

    /// The chain of `interceptors` from `next` on, ending with `load`.
    init(request: ImageRequest, interceptors: [any ImageInterceptor], next: Int,
         load: @escaping @Sendable (ImageRequest) async throws -> ImageResult) {
        self.request = request
        self.interceptors = interceptors
        self.next = next
        self.load = load
    }

    /// Runs the rest of the chain with `request`: the next interceptor, or the call itself.
    /// - Throws: what the rest of the chain throws.
    public func proceed(_ request: ImageRequest) async throws -> ImageResult {
        guard next < interceptors.count else { return try await load(request) }
        return try await interceptors[next].intercept(
            ImageInterceptorChain(request: request, interceptors: interceptors, next: next + 1, load: load))
    }

    /// Runs `interceptors` over `request`, ending with `load`.
    static func run(_ request: ImageRequest, through interceptors: [any ImageInterceptor],
                    load: @escaping @Sendable (ImageRequest) async throws -> ImageResult) async throws -> ImageResult {
        try await ImageInterceptorChain(request: request, interceptors: interceptors, next: 0, load: load).proceed(request)
    }
}

/// Changes every image a call hands out, after every cache (Kingfisher's `imageModifier`): a
/// memory hit is modified too, and the caches keep the image as it was. For what belongs in the
/// cache (a resize, a crop), use a transformer.
public struct ImageModifier: Sendable {
    /// The change.
    public let modify: @Sendable (Image) -> Image

    /// A modifier from a function.
    public init(_ modify: @escaping @Sendable (Image) -> Image) { self.modify = modify }
}

import Foundation

/// HTTP and HTTPS through libcurl (SDWebImage's `SDWebImageDownloader`): one multi handle on one
/// thread for all transfers, connection reuse (keep-alive, HTTP/2 multiplexing), gzip/deflate/br
/// decoded by libcurl, and SDWebImageDownloaderConfig's knobs in `Configuration`.
public final class HTTPImageLoader: ImageLoader {
    /// The loader `ImageLoaders.shared` uses.
    public static let shared = HTTPImageLoader()

    /// Execution order of queued requests of equal priority.
    public enum ExecutionOrder: Sendable { case fifo, lifo }

    /// The loader's settings; every default is the one in DESIGN.md.
    public struct Configuration: Sendable {
        /// Transfers running at once (default 6); later ones wait in the queue without a connection.
        /// At most a quarter of the process's open-file limit is used, whatever the setting.
        public var maximumConcurrentDownloads: Int = 6
        /// Stall and connect timeout (default 15 s).
        public var timeout: Duration = .seconds(15)
        /// The total time a transfer may take, in multiples of `timeout` (default 4).
        public var totalTimeoutFactor: Int = 4
        /// Which queued request starts first: the oldest (FIFO, default) or the newest (LIFO).
        public var executionOrder: ExecutionOrder = .fifo
        /// Sent with every request; a request's own headers override them.
        public var headers: [String: String] = ["Accept": "image/*,*/*;q=0.8", "User-Agent": "WebImage/0.1 (swift-web-image; libcurl)"]
        /// Status codes that count as success after redirects (default 200..<300).
        public var acceptableStatusCodes: Set<Int> = Set(200..<300)
        /// MIME types accepted; nil accepts any (the default).
        public var acceptableContentTypes: Set<String>?
        /// Basic or digest credentials.
        public var credentials: (user: String, password: String)?
        /// A proxy URL, e.g. `http://proxy:3128`. Without one (the default) the proxy variables
        /// of the environment (`http_proxy`, `HTTPS_PROXY`, `ALL_PROXY`, ...) are ignored unless
        /// `proxyFromEnvironment` is set: a variable meant for other programs must not route this
        /// loader's requests around its `addressPolicy`.
        public var proxy: String?
        /// Whether the environment's proxy variables are used when `proxy` is nil (default false).
        public var proxyFromEnvironment = false
        /// Redirects followed (default 10), to http and https only (libcurl's own default would
        /// also follow ftp and others).
        public var maximumRedirects: Int = 10
        /// Whether a redirect to a URL is followed; nil follows every http(s) redirect. Asked for
        /// each hop on the loader's thread, before anything connects to it (a service that loads
        /// only from some origins keeps that rule for every hop); a refusal fails the load with
        /// `ImageError.redirectNotAllowed(url:location:)`. It must return quickly.
        public var redirectFilter: (@Sendable (URL) -> Bool)?
        /// Which addresses transfers may connect to (default `.any`). A service that loads URLs
        /// its users give sets `.publicOnly()`: see `AddressPolicy`. Through a proxy the target's
        /// host is resolved and checked on the loader's thread before the request goes to the
        /// proxy, for the first URL and every redirect (the proxy's own address is checked as any
        /// connection's: allow its network when it is not public).
        public var addressPolicy: AddressPolicy = .any
        /// Larger responses fail with `ImageError.responseTooLarge` and are aborted (default 64 MiB).
        public var maximumResponseSize: Int = 64 << 20
        /// Progress is reported at most this often, and always at start and end (default 0.1 s).
        public var minimumProgressInterval: Duration = .milliseconds(100)
        /// Changes a request before it starts; nil refuses it.
        public var requestModifier: RequestModifier?
        /// Changes or refuses every request asynchronously, after `requestModifier` (an access
        /// token refreshed before sending); a request's own replaces it.
        public var asyncRequestModifier: AsyncRequestModifier?
        /// Inspects or rewrites a response; nil refuses it (the transfer stops).
        public var responseModifier: ResponseModifier?
        /// Transforms the whole body before it is delivered (in one piece, at the end).
        public var decryptor: Decryptor?
        /// The most bytes of partial bodies kept to be resumed (Nuke's `ResumableData`;
        /// default 32 MiB, 0: none). A transfer cancelled or failed midway (a timeout, a reset)
        /// whose response had `Accept-Ranges: bytes` and a strong `ETag` or a `Last-Modified`
        /// leaves what arrived; the next transfer of the URL asks for the rest (`Range`,
        /// `If-Range`) and gives its caller the whole body, or starts again when the server
        /// answers 200 (the image changed). Bodies streamed to a progress watcher without a
        /// decryptor are not held, so not kept.
        public var resumableDataLimit: Int = 32 << 20

        /// The defaults.
        public init() {}
    }

    /// The settings this loader was made with.
    public let configuration: Configuration
    let engine: CurlEngine

    /// A loader with its own libcurl thread and connection pool.
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        engine = CurlEngine(configuration: configuration)
    }

    deinit { engine.stop() }

    /// Whether new transfers wait in the queue (SDWebImage's `SDWebImageDownloader.suspended`):
    /// transfers already running go on, queued and new ones start, in their order, once it is
    /// set back to false. Cancelling a waiting caller still ends its transfer at once.
    public var isSuspended: Bool {
        get { engine.isSuspended }
        set { engine.isSuspended = newValue }
    }

    /// Bytes of partial bodies kept to be resumed (`Configuration.resumableDataLimit`).
    public var resumableDataBytes: Int { engine.resumable?.bytes ?? 0 }

    /// Transfers queued or running (SDWebImage's `SDWebImageDownloader.currentDownloadCount`,
    /// queued ones included). A load that returned, failed or was cancelled is no longer counted.
    public var liveTransferCount: Int { engine.liveTransfers }

    /// It modifies its responses itself, and starts newest first when configured LIFO.
    public var capabilities: ImageLoaderCapabilities {
        configuration.executionOrder == .lifo ? [.appliesResponseModifier, .startsNewestFirst] : .appliesResponseModifier
    }

    /// The configuration's headers with the request's over them (names compared in any case),
    /// as a transfer sends them before the request modifiers.
    public func requestHeaders(for request: ImageLoaderRequest) -> [String: String] {
        var headers = CacheEntryMetadata.lowercased(configuration.headers)
        for (name, value) in request.headers { headers[name.lowercased()] = value }
        return headers
    }

    public func canLoad(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return (scheme == "http" || scheme == "https") && url.host?.isEmpty == false
    }

    public func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        guard let asyncModifier = asyncModifier(for: request) else {
            do {
                return engine.start(try prepared(request))
            } catch {
                return AsyncThrowingStream { $0.finish(throwing: error) }
            }
        }
        // The asynchronous modifier runs in a task; the transfer starts only once it returned
        // and the consumer is still there.
        let engine = self.engine
        return .produced { continuation in
            let ready = try await HTTPImageLoader.modified(try self.prepared(request), by: asyncModifier)
            for try await event in engine.start(ready) { continuation.yield(event) }
            try Task.checkCancellation()
        }
    }

    /// The whole body in one resumption (the engine gathers it on its thread).
    public func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) {
        var ready = try prepared(request)
        if let asyncModifier = asyncModifier(for: request) { ready = try await HTTPImageLoader.modified(ready, by: asyncModifier) }
        return try await engine.wholeBody(ready)
    }

    /// The request's own modifiers replace the loader's: its asynchronous one, if any.
    private func asyncModifier(for request: ImageLoaderRequest) -> AsyncRequestModifier? {
        let own = request.requestModifier != nil || request.asyncRequestModifier != nil
        return own ? request.asyncRequestModifier : configuration.asyncRequestModifier
    }

    /// The request after the URL check and the synchronous request modifier. A call cancelled
    /// while the modifier ran stops here: nothing is sent.
    private func prepared(_ request: ImageLoaderRequest) throws -> ImageLoaderRequest {
        guard canLoad(request.url) else { throw ImageError.invalidURL(request.url.absoluteString) }
        let own = request.requestModifier != nil || request.asyncRequestModifier != nil
        guard let modifier = own ? request.requestModifier : configuration.requestModifier else { return request }
        guard let modified = modifier(request) else { throw ImageError.requestCancelledByModifier(url: request.url) }
        try Task.checkCancellation()
        return modified
    }

    /// `request` through an asynchronous modifier; checks cancellation after it returns.
    private static func modified(_ request: ImageLoaderRequest, by modifier: AsyncRequestModifier) async throws -> ImageLoaderRequest {
        try Task.checkCancellation()
        guard let modified = await modifier(request) else { throw ImageError.requestCancelledByModifier(url: request.url) }
        try Task.checkCancellation()
        return modified
    }
}

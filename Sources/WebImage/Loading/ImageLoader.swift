import Foundation

/// Loads the bytes of an image from a URL (SDWebImage's `SDImageLoader`).
///
/// `load(_:)` returns a stream: one `.response`, then `.data` chunks as they arrive with
/// `.progress` along the way, then the end of the stream (or an `ImageError`). Cancelling the
/// task that iterates the stream (or dropping the stream) aborts the transfer; the iteration
/// then simply ends, so a streaming consumer checks `Task.isCancelled` (`data(for:)` throws
/// `CancellationError`).
public protocol ImageLoader: Sendable {
    /// Whether this loader handles `url` (by scheme).
    func canLoad(_ url: URL) -> Bool
    /// Starts loading; the stream reports the response, data and progress.
    func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error>
    /// Loads the whole body when nobody watches progress (loaders may do it with fewer hand-offs).
    /// - Throws: the loader's `ImageError`, or `CancellationError`.
    func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse)
    /// What this loader does or needs (see `ImageLoaderCapabilities`); none by default.
    var capabilities: ImageLoaderCapabilities { get }
    /// The headers this loader sends for `request` before any request modifier runs: its own
    /// defaults with the request's over them. The manager compares them with a cached
    /// response's `Vary`. Default: the request's own headers.
    func requestHeaders(for request: ImageLoaderRequest) -> [String: String]
}

/// Changes a request before it is sent, or returns nil to refuse it (SDWebImage's
/// `SDWebImageDownloaderRequestModifier`). A refused request fails with
/// `ImageError.requestCancelledByModifier`.
public typealias RequestModifier = @Sendable (ImageLoaderRequest) -> ImageLoaderRequest?

/// A request modifier that may suspend: an access-token refresh before the request is sent is
/// the common case (Kingfisher's `AsyncImageDownloadRequestModifier`). It runs after the
/// synchronous `RequestModifier`, if both are set; it runs in a task, never blocking a thread.
/// Returns the request to send, or nil to refuse it (`ImageError.requestCancelledByModifier`).
/// A call cancelled while it runs sends nothing.
public typealias AsyncRequestModifier = @Sendable (ImageLoaderRequest) async -> ImageLoaderRequest?

/// Inspects the response before its body is accepted; returns a changed response, or nil to
/// refuse it (SDWebImage's `SDWebImageDownloaderResponseModifier`). A refusal fails the load.
public typealias ResponseModifier = @Sendable (ImageLoaderResponse) -> ImageLoaderResponse?

/// How urgently a queued request starts: high first, low last (SDWebImage's high/low priority options).
public enum ImageLoaderPriority: Int, Sendable, Comparable {
    case low = 0, normal = 1, high = 2
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// The priority `options` ask for (`.highPriority`, `.lowPriority`), else normal.
    @inlinable
    init(_ options: ImageOptions) {
        self = options.contains(.highPriority) ? .high : options.contains(.lowPriority) ? .low : .normal
    }
}

/// What to load and how.
public struct ImageLoaderRequest: Sendable {
/// The URL to load.
    public var url: URL
    /// Extra request headers, added to (and overriding) the loader's defaults.
    public var headers: [String: String]
    /// Stall and total timeout; nil uses the loader's default (15 s for HTTP).
    public var timeout: Duration?
    /// Where the request goes in the loader's queue.
    public var priority: ImageLoaderPriority
    /// Set when the priority may change while the request waits (a caller with a higher
    /// priority joined the load, or the caller changed it): a queuing loader watches it and
    /// reorders the waiting request. Its value beats `priority` once set.
    public var priorityHandle: LoadPriority?
    /// Accept TLS certificates that do not verify (SDWebImage's `allowInvalidSSLCertificates`).
    public var allowsInvalidCertificates: Bool
    /// Send and store cookies in the loader's cookie store (SDWebImage's `handleCookies`).
    public var handlesCookies: Bool
    /// Treat 304 Not Modified as a response (for `refreshCached` revalidation) instead of an error.
    public var acceptsNotModified: Bool
    /// Changes or refuses this request; replaces the loader's own request modifier.
    public var requestModifier: RequestModifier?
    /// Changes or refuses this request, asynchronously, after `requestModifier`; replaces the
    /// loader's own asynchronous modifier.
    public var asyncRequestModifier: AsyncRequestModifier?
    /// Inspects, rewrites or refuses the response; replaces the loader's own response modifier.
    public var responseModifier: ResponseModifier?
    /// Turns the downloaded bytes into image bytes; replaces the loader's own decryptor. Every
    /// built-in loader applies it (HTTP, file and data URLs), as SDWebImage's context decryptor.
    public var decryptor: Decryptor?
    /// The call's context, merged over the manager's defaults (custom `ImageContextKey` values
    /// included), for a loader of the program's own, as SDWebImage hands its loaders the
    /// `SDWebImageContext`. Empty when the request was not made by a manager.
    public var context = ImageContext()
    /// The manager's backlog of bodies waiting for a decode: `HTTPImageLoader` holds this
    /// transfer in its queue while it has no room (set by the manager).
    var backlog: BacklogGate?
    /// Where `HTTPImageLoader` leaves a response it rejected for its status (set by the
    /// manager's retry loop, which reads its `Retry-After`).
    var rejectedResponse: ResponseRecorder?
    /// Where `HTTPImageLoader` leaves the transfer's metrics when it ends (set by the manager).
    var metricsRecorder: TransferMetricsRecorder?

    /// A request for `url`; every other argument has the documented default.
    public init(url: URL, headers: [String: String] = [:], timeout: Duration? = nil, priority: ImageLoaderPriority = .normal,
                allowsInvalidCertificates: Bool = false, handlesCookies: Bool = false, acceptsNotModified: Bool = false) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.priority = priority
        self.allowsInvalidCertificates = allowsInvalidCertificates
        self.handlesCookies = handlesCookies
        self.acceptsNotModified = acceptsNotModified
    }
}

/// The response that came back (after redirects).
public struct ImageLoaderResponse: Sendable {
    /// The HTTP status (200 for file and data URLs).
    public var statusCode: Int
    /// Header names in lowercase.
    public var headers: [String: String]
    /// The announced length, when there is one.
    public var expectedContentLength: Int64?
    /// The URL after redirects.
    public var url: URL
    /// The body counted in the manager's backlog by the loader as the transfer ended (set by
    /// `HTTPImageLoader` when the request carries a backlog).
    var backlogClaim: BacklogClaim?
    /// What the transfer took (`HTTPImageLoader`, in the response of `data(for:)` and in the
    /// manager's `ImageResult.transferMetrics`); nil from other loaders and in a streamed
    /// response, which is sent before the transfer ends.
    public var metrics: TransferMetrics? {
        get { measured?.metrics }
        set { measured = newValue.map(MeasuredTransfer.init) }
    }
    /// The metrics, boxed: every stage of a load holds and copies the response.
    var measured: MeasuredTransfer?
    /// The MIME type without parameters, when known.
    public var mimeType: String? { headers["content-type"]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }

    /// A response.
    public init(statusCode: Int, headers: [String: String], expectedContentLength: Int64?, url: URL) {
        self.statusCode = statusCode
        self.headers = headers
        self.expectedContentLength = expectedContentLength
        self.url = url
    }
}

/// Byte counts so far.
public struct ImageProgress: Sendable, Equatable {
    /// Bytes received so far.
    public var receivedBytes: Int64
    /// The announced total, when the response has a length.
    public var expectedBytes: Int64?

    /// Progress of `receivedBytes` out of `expectedBytes` (nil when unknown).
    public init(receivedBytes: Int64, expectedBytes: Int64?) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
    }

    /// 0...1 when the total is known.
    public var fraction: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, Double(receivedBytes) / Double(expectedBytes))
    }
}

/// What a loader reports while it loads.
public enum ImageLoaderEvent: Sendable {
    case response(ImageLoaderResponse)
    case data(Data)
    case progress(ImageProgress)
}

extension ImageLoader {
    /// The request's own headers (a loader that adds headers of its own says so).
    public func requestHeaders(for request: ImageLoaderRequest) -> [String: String] { request.headers }

    /// Loads the whole body by gathering the stream's data.
    /// - Throws: the loader's `ImageError`, or `CancellationError`.
    public func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) {
        try await gatherBody(of: request) { _ in }
    }

    /// Loads `request` through `load(_:)`, gathering the body while `onEvent` sees every event.
    func gatherBody(of request: ImageLoaderRequest, onEvent: (ImageLoaderEvent) -> Void) async throws
        -> (Data, ImageLoaderResponse) {
        var body = Data()
        var response: ImageLoaderResponse?
        for try await event in load(request) {
            switch event {
            case .response(let r):
                response = r
                if let expected = r.expectedContentLength, expected > 0, expected < 256 << 20 { body.reserveCapacity(Int(expected)) }
            case .data(let chunk): body.append(chunk)
            case .progress: break
            }
            onEvent(event)
        }
        try Task.checkCancellation()
        guard let response else { throw ImageError.network(url: request.url, reason: "no response") }
        return (body, response)
    }
}

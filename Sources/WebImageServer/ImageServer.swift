import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import Synchronization
import WebImage
import WebImageIsolation
import WebImageMemcached

/// `webimage serve`: an image proxy and thumbnail server on the library (Hummingbird 2).
///
/// `GET /SIGNATURE/OPTIONS.../SOURCE` fetches the source through the library (shared fetches,
/// decode at size, caches), processes and encodes it. Signed by default (HMAC-SHA256, see
/// `URLSigner`, checked before the path is read); the allowed sources hold for every redirect;
/// no request goes to loopback, private, link-local or metadata addresses unless allowed;
/// bounded: equal requests share one work, past `maximumPendingRequests` distinct ones get a 503
/// with `Retry-After`, each result's size is checked before it exists and the results being made
/// share a memory budget, idle connections close and connections stay below the descriptor
/// limit (DocC "Serving images", Security model). `GET /health` answers `ok`. SIGTERM or SIGINT
/// stop it gracefully: no new connection, the requests in flight get `stopTimeoutSeconds` to
/// finish (then a 503), the pending cache writes are flushed.
public final class ImageServer: Sendable {
    /// The configuration it runs with.
    public let configuration: ServerConfiguration
    /// The manager behind it (its caches and loader).
    public let manager: ImageManager
    /// Turns checked requests into results, keeps them, and counts what it renders.
    let processor: ImageProcessor
    private let signer: URLSigner?
    private let sources: SourcePolicy
    private let limits: ProcessingLimits
    private let pending = Atomic<Int>(0)
    /// The requests being processed, by response key: an equal request joins one in flight.
    private let inFlight: ResponseWork
    /// The open connections, their cap and which are idle.
    let connections: OpenConnections
    /// The metrics of every request, made once: `requests_total` by status and source.
    private let requestCounters = Mutex<[String: CoreMetrics.Counter]>([:])
    private let durationTimer = Metrics.Timer(label: "webimage_server_request_duration_seconds")
    private let logger: Logger
    /// The registry `/metrics` shows, when the program gave one.
    private let registry: PrometheusCollectorRegistry?
    /// The `Date` of warm answers.
    private let dateHeader = DateHeader()
    /// The sandboxed decoding workers, when `isolation` is on.
    let decodingWorkers: DecodingWorkerPool?

    /// A server for `configuration`. Its metrics (and the library's) go through swift-metrics
    /// to whatever backend the program bootstrapped; with `metrics`, the registry of a
    /// swift-prometheus backend, `GET /metrics` shows them in Prometheus' text format.
    /// - Throws: `ServerConfigurationError` for a missing or malformed key or salt, a bad
    ///   network or shared cache, or an unusable cache folder.
    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "webimage.serve"),
                metrics registry: PrometheusCollectorRegistry? = nil) throws {
        self.configuration = configuration
        self.logger = logger
        self.registry = registry
        // First: the loader sizes its connection budget from the descriptor limit raised here.
        connections = OpenConnections(limits: ConnectionLimits(configured: configuration.maximumConnections))
        inFlight = ResponseWork(timeout: .milliseconds(Int(max(0.001, configuration.processingTimeoutSeconds) * 1000)))
        signer = try configuration.signer()
        sources = SourcePolicy(allowed: configuration.allowedSources, fileRoot: configuration.fileRoot)
        limits = try configuration.processingLimits()
        let defaults = try configuration.resultDefaults()

        var loaderConfiguration = HTTPImageLoader.Configuration()
        loaderConfiguration.addressPolicy = .publicOnly(allowing: try configuration.networks())
        loaderConfiguration.maximumResponseSize = configuration.maximumSourceBytes
        // The allowed sources hold for every hop of a redirect chain, not only the first URL.
        let sources = self.sources
        loaderConfiguration.redirectFilter = { sources.refusal($0) == nil }
        let loader = HTTPImageLoader(configuration: loaderConfiguration)
        guard configuration.memoryCacheMinimumUses >= 1 else {
            throw ServerConfigurationError("memoryCacheMinimumUses must be at least 1, not \(configuration.memoryCacheMinimumUses)")
        }
        let memory = MemoryCache(configuration: .init(costLimit: configuration.memoryCacheMegabytes << 20,
                                                      minimumUses: configuration.memoryCacheMinimumUses))
        let folder = configuration.cacheDirectory.map { URL(fileURLWithPath: $0) }
            ?? DiskCache.defaultDirectory(namespace: "serve")
        // Every source is decoded in a worker process (isolation); encodes of the server's own
        // pixels stay here.
        decodingWorkers = configuration.isolation ? DecodingWorkerPool(configuration: configuration.decodingWorkerPool) : nil
        // PDF only when configured, in process and in the workers.
        let coders = configuration.sourceCoders(workers: decodingWorkers)
        let local = ImageCache(memory: memory, disk: DiskCache(directory: folder), coders: coders)
        var cache: any ImageCaching = local
        if let shared = configuration.sharedCache {
            do {
                let tier = try SharedCacheTier(SharedCacheConfiguration(servers: SharedCacheConfiguration.servers(from: shared)))
                cache = TieredImageCache(base: local, tier: tier, coders: coders)
            } catch {
                throw ServerConfigurationError("sharedCache: \(error)")
            }
        }
        var managerConfiguration = ImageManager.Configuration()
        managerConfiguration.maximumConcurrentLoads = max(1, configuration.maximumConcurrentLoads)
        managerConfiguration.rateLimiter = nil   // a proxy answers its clients; it does not throttle them
        // A source over one request's pixel limit may be within another's (a resize decodes more
        // than a request without one may): it is not blacklisted for all of them.
        managerConfiguration.shouldBlockFailedURL = { _, error in
            switch (error as? ImageError)?.decodeFailure {
            case .tooLarge?, .animationTooLarge?: return false
            default: break
            }
            return ImageManager.isPermanentFailure(error)
        }
        managerConfiguration.defaultContext.loadTimeout = .milliseconds(Int(configuration.processingTimeoutSeconds * 1000))
        // The server's caches are shared between its clients: the origin's headers are read as a
        // shared cache reads them (s-maxage, proxy-revalidate; private and Vary: * kept nowhere).
        managerConfiguration.defaultContext.httpCachePolicy = configuration.cachePolicy.respectsHeaders ? .respectHeadersShared : .ignoreHeaders
        manager = ImageManager(cache: cache, loaders: ImageLoaders([loader, FileImageLoader(maximumFileSize: configuration.maximumSourceBytes)]),
                               coders: coders, configuration: managerConfiguration)
        let resultLimits = ResultLimits(maximumDimension: configuration.maximumDimension,
                                        maximumPixels: configuration.maximumResultMegapixels * 1_000_000,
                                        maximumFrames: configuration.maximumFrames,
                                        maximumSourcePixels: configuration.maximumSourceMegapixels * 1_000_000)
        processor = ImageProcessor(manager: manager, responseCacheBytes: configuration.responseCacheMegabytes << 20,
                                   limits: resultLimits, budget: ProcessingBudget(capacity: configuration.processingMemoryMegabytes << 20),
                                   defaults: defaults)
    }

    /// Runs until SIGTERM or SIGINT (or until the calling task is cancelled), then stops
    /// gracefully and flushes the pending cache writes. `onRunning` gets the port it listens on.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        if signer == nil { logger.warning("serving without signatures (--insecure): any URL is accepted; for development only") }
        // One switch, not a router: the image paths have many segments, and a trie walking each
        // of them took 5 % of a warm request's time for the one route that takes everything.
        let health = ByteBuffer(string: "ok"), registry = self.registry
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            guard request.method == .get else {
                return Self.refusal(ProcessingRequestError(405, "only GET is served"), allow: "GET")
            }
            switch request.uri.path {
            case "/health":
                return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: health))
            case "/metrics" where registry != nil:
                let text = ByteBuffer(bytes: registry?.emitToBuffer() ?? [])
                return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"], body: .init(byteBuffer: text))
            default:
                return await self.respond(to: request)
            }
        }
        let connections = self.connections
        // Idle connections are closed by a sweep of the tracker's timestamps: Hummingbird's own
        // idle timeout arms and cancels a timer on every request.
        // Results fresh in the response cache are answered on the connection's event loop, the
        // rest go on to the responder.
        let http = HTTPServerBuilder { responder in
            WarmHTTP1Channel(base: HTTP1Channel(responder: responder), handlers: {
                let tracker = connections.tracker()
                return [tracker, WarmResponder(server: self, tracker: tracker)]
            })
        }
        let idle = Duration.milliseconds(Int(max(0.001, configuration.idleTimeoutSeconds) * 1000))
        let sweep = Task { await connections.sweep(every: idle) }
        defer { sweep.cancel() }
        let app = Application(responder: responder, server: http,
                              configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "webimage",
                                                   availableConnectionsDelegate: ConnectionCap(maximum: connections.limits.maximum)),
                              onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
                              logger: logger)
        logger.debug("connections: at most \(connections.limits.maximum) of \(connections.limits.descriptors) descriptors")
        let stop = StopDeadline(grace: .milliseconds(Int(max(0, configuration.stopTimeoutSeconds) * 1000)), work: inFlight)
        // Stopped in reverse order: the deadline starts first, then the server stops accepting
        // and waits for the requests in flight, which the deadline cancels when it passes.
        let group = ServiceGroup(configuration: .init(services: [app, stop], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        defer { decodingWorkers?.shutdown() }
        do {
            try await group.run()
        } catch {
            stop.disarm()
            await manager.waitForPendingStores()
            throw error
        }
        stop.disarm()
        await manager.waitForPendingStores()
    }

    /// The answer to one image request.
    func respond(to request: Request) async -> Response {
        let start = ContinuousClock.now
        let path = request.uri.path
        let response: Response
        var source = "-"
        let accept = request.headers[.accept]
        let responseKey = processor.responseKey(path: path, accept: accept)
        let cached = processor.cachedResponse(forKey: responseKey)
        if case .fresh(let warm)? = cached {
            // A warm request: the same path was parsed, checked and processed before.
            source = warm.source
            response = Self.answer(warm, ifNoneMatch: request.headers[.ifNoneMatch], maxAge: configuration.cacheMaxAgeSeconds)
        } else {
            switch await inFlight.result(forKey: responseKey, admit: admit, work: {
                defer { self.pending.subtract(1, ordering: .relaxed) }
                // A stale result whose source is unchanged is kept; else it is made again.
                if case .stale(let entry)? = cached, let kept = await self.processor.revalidated(entry, forKey: responseKey) {
                    return .success(kept)
                }
                do throws(ProcessingRequestError) { return .success(try await self.process(path: path, accept: accept, responseKey: responseKey)) } catch { return .failure(error) }
            }) {
            case .success(let processed):
                source = processed.source
                response = Self.answer(processed, ifNoneMatch: request.headers[.ifNoneMatch], maxAge: configuration.cacheMaxAgeSeconds)
            case .failure(let error):
                response = Self.refusal(error, retryAfter: error.status == 503 ? 1 : nil)
            }
        }
        record(status: response.status.code, path: path, bytes: response.headers[.contentLength].flatMap { Int($0) } ?? 0, source: source, since: start)
        return response
    }

    /// The answer to a request whose result is fresh in the response cache, made where the
    /// request was read (`WarmResponder`, on its connection's event loop) with what `respond`
    /// would answer; nil for any other request, which goes on to `respond`.
    func warmAnswer(path: String, accept: String?, ifNoneMatch: String?) -> AnswerParts? {
        guard path != "/health", path != "/metrics" else { return nil }
        let start = ContinuousClock.now
        let responseKey = processor.responseKey(path: path, accept: accept)
        guard case .fresh(let warm)? = processor.cachedResponse(forKey: responseKey) else { return nil }
        var parts = Self.answerParts(warm, ifNoneMatch: ifNoneMatch, maxAge: configuration.cacheMaxAgeSeconds)
        // What Hummingbird adds to the responder's answers (neither is among the parts' fields).
        parts.fields.append(dateHeader.field)
        parts.fields.append(Self.serverField)
        record(status: parts.status.code, path: path, bytes: parts.body?.readableBytes ?? 0, source: warm.source, since: start)
        return parts
    }

    /// Counts, times and logs one answered request.
    private func record(status: Int, path: String, bytes: Int, source: String, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        requestCounter(status: status, source: source).increment()
        durationTimer.recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        logger.info("\(status) \(path) \(bytes) bytes \(String(format: "%.1f", Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)) ms \(source)")
    }

    /// Takes a processing slot for a new work, or refuses with a 503 when `maximumPendingRequests`
    /// are taken. A request that joins a work in flight takes none.
    private func admit() -> ProcessingRequestError? {
        guard pending.add(1, ordering: .relaxed).newValue > configuration.maximumPendingRequests else { return nil }
        pending.subtract(1, ordering: .relaxed)
        return ProcessingRequestError(503, "the server is busy; try again shortly")
    }

    /// Checks the signature, parses, checks the source, and processes.
    func process(path: String, accept: String?, responseKey: String) async throws(ProcessingRequestError) -> ProcessedImage {
        // The signature first: an unsigned or forged path is refused before any of it is read.
        if let signer {
            guard let (signature, signedPath) = ProcessingRequest.signature(of: path), signer.isValid(signature, for: signedPath) else {
                throw ProcessingRequestError(403, "the signature does not match the path")
            }
        }
        var (_, request) = try ProcessingRequest.parse(path: path, limits: limits)
        if let expires = request.expires, Double(expires) <= Date().timeIntervalSince1970 {
            throw ProcessingRequestError(404, "the URL expired")
        }
        if request.source.scheme?.lowercased() == "local" {
            request.source = try sources.localFile(request.source).get()
        } else if let refusal = sources.refusal(request.source) {
            throw ProcessingRequestError(403, refusal)
        }
        return try await processor.process(request, accept: accept, responseKey: responseKey)
    }

    /// The counter of requests answered with `status` from `source`.
    private func requestCounter(status: Int, source: String) -> CoreMetrics.Counter {
        let key = "\(status) \(source)"
        if let counter = requestCounters.withLock({ $0[key] }) { return counter }
        let counter = CoreMetrics.Counter(label: "webimage_server_requests_total", dimensions: [("status", String(status)), ("source", source)])
        requestCounters.withLock { $0[key] = counter }
        return counter
    }

    /// The status, headers and body that answer with `processed`.
    struct AnswerParts {
        var status: HTTPResponse.Status
        /// Each name once, in the order they are sent.
        var fields: [HTTPField]
        /// Nil for a 304.
        var body: ByteBuffer?
    }

    static func answerParts(_ processed: ProcessedImage, ifNoneMatch: String?, maxAge: Int) -> AnswerParts {
        // The origin's rules cap what is passed on: no-store and no-cache stay so, and a source
        // fresh for a minute is not promised fresh downstream for longer.
        let cacheControl = processed.freshness?.cacheControl(cappedAt: maxAge) ?? "public, max-age=\(maxAge)"
        // Each name once, appended (no search for an earlier field of the same name).
        var fields = [HTTPField(name: .eTag, value: processed.etag), HTTPField(name: .cacheControl, value: cacheControl)]
        fields.reserveCapacity(8)
        if processed.variesWithAccept { fields.append(HTTPField(name: .vary, value: "Accept")) }
        if let disposition = processed.disposition { fields.append(HTTPField(name: .contentDisposition, value: disposition)) }
        if let reason = processed.fallbackReason { fields.append(HTTPField(name: Self.fallbackReason, value: reason)) }
        if let ifNoneMatch, ifNoneMatch.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == processed.etag || $0.trimmingCharacters(in: .whitespaces) == "*" }) {
            return AnswerParts(status: .notModified, fields: fields, body: nil)
        }
        fields.append(HTTPField(name: .contentType, value: processed.contentType))
        fields.append(HTTPField(name: .contentLength, value: String(processed.body.readableBytes)))
        return AnswerParts(status: .init(code: processed.status), fields: fields, body: processed.body)
    }

    static func answer(_ processed: ProcessedImage, ifNoneMatch: String?, maxAge: Int) -> Response {
        let parts = answerParts(processed, ifNoneMatch: ifNoneMatch, maxAge: maxAge)
        return Response(status: parts.status, headers: HTTPFields(parts.fields), body: parts.body.map { .init(byteBuffer: $0) } ?? .init())
    }

    /// The `Server` field of answers made by `warmAnswer` (Hummingbird adds it to the others).
    static let serverField = HTTPField(name: .server, value: "webimage")

    /// The header of a fallback answer naming the source's failure.
    static let fallbackReason = HTTPFields.Element.Name("X-Fallback-Reason")!

    static func refusal(_ error: ProcessingRequestError, retryAfter: Int? = nil, allow: String? = nil) -> Response {
        let body = ByteBuffer(string: error.reason + "\n")
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8", .contentLength: String(body.readableBytes),
                                   .cacheControl: "no-store"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if let allow { headers[.allow] = allow }
        return Response(status: .init(code: error.status), headers: headers, body: .init(byteBuffer: body))
    }
}

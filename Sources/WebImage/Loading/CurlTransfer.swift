import CCurl
import CWebImageCodecs
import Foundation

/// One HTTP transfer driven by a `CurlEngine`. Created on any thread; after `start` it is used
/// only on the engine's thread (the libcurl callbacks run there).
final class CurlTransfer {
    let id: Int
    let request: ImageLoaderRequest
    let configuration: HTTPImageLoader.Configuration
    let sink: Sink
    var easy: UnsafeMutableRawPointer?
    /// Whether the handle was given the cookie share (`curl_easy_reset` keeps a share: such a
    /// handle is freed, not reused).
    private var usesCookies = false
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var headers: [String: String] = [:]
    private var response: ImageLoaderResponse?
    private var received: Int64 = 0
    private var lastProgress = ContinuousClock.now
    /// The byte count of the last progress event sent (the final one is not sent twice).
    private var lastReported: Int64 = -1
    /// Set when a callback aborts the transfer; reported instead of libcurl's write error.
    private var failure: (any Error)?
    /// The body kept for the whole-body sink or the decryptor.
    private var held = BodyBuffer()
    /// The request URL as libcurl was given it.
    private let requestURLString: String
    /// The request's response modifier, else the loader's.
    private let responseModifier: ResponseModifier?
    /// The request's decryptor, else the loader's.
    private let decryptor: Decryptor?
    /// Where a partial body is kept when the transfer fails midway, and found when it starts.
    private let resumable: ResumableDataStore?
    /// The partial body this transfer asked the server to continue.
    private var resuming: ResumableDataStore.Entry?
    /// When the transfer was queued, and when it left the queue.
    private let queuedAt = ContinuousClock.now
    private var startedAt: ContinuousClock.Instant?
    private var metrics: TransferMetrics?
    /// The address guard of a transfer under `AddressPolicy.publicOnly`.
    private var addressGuard: AddressGuard?

    /// Where a transfer's results go: a stream of events, or one resumption with the whole body
    /// (fewer thread hand-offs when nobody watches progress).
    enum Sink {
        case stream(AsyncThrowingStream<ImageLoaderEvent, any Error>.Continuation)
        case whole(CheckedContinuation<(Data, ImageLoaderResponse), any Error>)
    }

    init(id: Int, request: ImageLoaderRequest, configuration: HTTPImageLoader.Configuration, sink: Sink,
         resumable: ResumableDataStore? = nil) {
        self.id = id
        self.request = request
        self.configuration = configuration
        self.sink = sink
        requestURLString = request.url.absoluteString
        responseModifier = request.responseModifier ?? configuration.responseModifier
        decryptor = request.decryptor ?? configuration.decryptor
        // A body is kept only where it is held (not streamed away), for plain requests.
        let holdsBody = decryptor != nil || { if case .whole = sink { true } else { false } }()
        self.resumable = holdsBody && !request.acceptsNotModified ? resumable : nil
        errorBuffer.initialize(to: 0)
    }

    private var streams: Bool { if case .stream = sink { true } else { false } }

    private func emit(_ event: ImageLoaderEvent) {
        if case .stream(let continuation) = sink { continuation.yield(event) }
    }

    /// Why the transfer could not start, when `makeHandle` returned false for a reason of its own.
    private(set) var setupFailure: (any Error)?

    /// Whether a proxy connects to the targets (the socket guard then sees only the proxy).
    private var proxied: Bool { configuration.proxy != nil || configuration.proxyFromEnvironment }

    /// Ends the transfer with an error (exactly once).
    func fail(_ error: any Error) {
        if let resuming {
            // The kept body was asked for but never continued (a reset or an error status
            // before any of it came back): it stays for the next try.
            self.resuming = nil
            resumable?.store(resuming, for: requestURLString)
        }
        keepPartialBody(after: error)
        switch sink {
        case .stream(let continuation): continuation.finish(throwing: error)
        case .whole(let continuation): continuation.resume(throwing: error)
        }
    }

    private func succeed() {
        switch sink {
        case .stream(let continuation): continuation.finish()
        case .whole(let continuation):
            // The body counts in the manager's backlog from now, before the caller's task runs
            // (the loader's thread reads the gate before it starts the next transfer).
            // Built in a call, not held in a local: the caller then holds the only reference to
            // the claim, and dropping the response releases it at once (a local copy kept it
            // until this function returned, on the loader's thread).
            let bytes = held.count
            continuation.resume(returning: (held.take(), finishedResponse(claiming: bytes)))
        }
    }

    /// The response handed to a caller of `data(for:)`: with a backlog claim of the body's
    /// `bytes` and the transfer's metrics.
    private func finishedResponse(claiming bytes: Int) -> ImageLoaderResponse {
        var response = response!
        response.backlogClaim = request.backlog?.claim(bytes)
        response.metrics = metrics
        return response
    }

    /// Keeps what arrived of a body whose transfer was cancelled or failed for a transient reason,
    /// when its response allows resuming.
    private func keepPartialBody(after error: any Error) {
        guard let resumable, held.count > 0, let response, error is CancellationError || RetryStrategy.isTransient(error),
              let validator = ResumableDataStore.validator(of: response) else { return }
        resumable.store(ResumableDataStore.Entry(data: held.take(), validator: validator), for: requestURLString)
    }

    deinit {
        held.discard()
        if let easy { curl_easy_cleanup(easy) }
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// A libcurl list of `headers`, sorted by name (the caller frees it).
    static func headerList(_ headers: [String: String]) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { list = curl_slist_append(list, "\(name): \(value)") }
        return list
    }

    /// Gives the easy handle back once the transfer has left the multi handle (on the engine's
    /// thread), with every option reset, for the next transfer; nil when it was freed instead:
    /// not `forReuse`, or not reusable (it holds this transfer's cookies). The transfer no
    /// longer touches it.
    func releaseHandle(forReuse: Bool) -> UnsafeMutableRawPointer? {
        guard let easy else { return nil }
        self.easy = nil
        if !forReuse || usesCookies {
            curl_easy_cleanup(easy)
            return nil
        }
        curl_easy_reset(easy)
        return easy
    }

    /// Makes the easy handle, or sets up `reused` (one `releaseHandle()` gave back, with its
    /// TLS session cache). Returns false when libcurl refuses (the engine then fails it).
    /// `defaultHeaders` is the engine's list of the configuration's headers, used as is when the
    /// request adds none (the engine owns it).
    func makeHandle(share: UnsafeMutableRawPointer?, defaultHeaders: UnsafeMutablePointer<curl_slist>?,
                    reusing reused: UnsafeMutableRawPointer? = nil) -> Bool {
        guard let easy = reused ?? curl_easy_init() else { return false }
        self.easy = easy
        startedAt = .now
        let timeout = request.timeout ?? configuration.timeout
        let timeoutMs = max(1, Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        _ = wi_curl_setopt_string(easy, CURLOPT_URL, requestURLString)
        _ = wi_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = wi_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, configuration.maximumRedirects > 0 ? 1 : 0)
        _ = wi_curl_setopt_long(easy, CURLOPT_MAXREDIRS, configuration.maximumRedirects)
        // http and https only, for the first request and every redirect (libcurl's default
        // redirect protocols include ftp).
        _ = wi_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = wi_curl_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        _ = wi_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, timeoutMs)
        _ = wi_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeoutMs * max(1, configuration.totalTimeoutFactor))
        // A stall: less than one byte a second for the timeout.
        _ = wi_curl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1)
        _ = wi_curl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, timeoutMs / 1000))
        _ = wi_curl_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "")   // every encoding libcurl decodes
        _ = wi_curl_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        // Waiting for a connection that may multiplex pays only where HTTP/2 is possible (https).
        // Over plain http it would queue every request to a host behind the first response:
        // a burst of cold loads would be serialised, and all of them stuck behind a stalled one.
        if request.url.scheme?.lowercased() == "https" { _ = wi_curl_setopt_long(easy, CURLOPT_PIPEWAIT, 1) }
        _ = wi_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = wi_curl_setopt_offset(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(configuration.maximumResponseSize))
        // The receive buffer stays at libcurl's 16 KiB: a larger one is a fresh allocation, and
        // its pages' faults, around every small image, reused handle or not, and large bodies
        // gain nothing from it (Benchmarks/README.md, "Figures once in source comments").
        if request.allowsInvalidCertificates {
            _ = wi_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0)
            _ = wi_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0)
        }
        if request.handlesCookies, let share {
            usesCookies = true
            _ = wi_curl_setopt_string(easy, CURLOPT_COOKIEFILE, "")
            _ = wi_curl_setopt_share(easy, share)
        }
        if let credentials = configuration.credentials {
            _ = wi_curl_setopt_string(easy, CURLOPT_USERNAME, credentials.user)
            _ = wi_curl_setopt_string(easy, CURLOPT_PASSWORD, credentials.password)
            _ = wi_curl_setopt_long(easy, CURLOPT_HTTPAUTH, wi_curl_auth_basic_or_digest())
        }
        if let proxy = configuration.proxy {
            _ = wi_curl_setopt_string(easy, CURLOPT_PROXY, proxy)
        } else if !configuration.proxyFromEnvironment {
            _ = wi_curl_setopt_string(easy, CURLOPT_PROXY, "")   // "": the environment's variables are not read
        }
        if configuration.addressPolicy.publicOnly {
            let addressGuard = AddressGuard(configuration.addressPolicy)
            self.addressGuard = addressGuard
            _ = wi_curl_set_address_guard(easy, addressGuard.pointer)
            if proxied, let refused = refusedTarget(requestURLString) {
                setupFailure = refused
                return false
            }
        }
        resuming = resumable?.take(requestURLString)
        if request.headers.isEmpty, resuming == nil {
            _ = wi_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, defaultHeaders)
        } else {
            var all = configuration.headers
            for (name, value) in request.headers { all[name] = value }
            if let resuming {
                all["Range"] = "bytes=\(resuming.data.count)-"
                all["If-Range"] = resuming.validator
            }
            headerList = CurlTransfer.headerList(all)
            _ = wi_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList)
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = wi_curl_setopt_write(easy, { data, size, count, context in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().receive(data!, size * count)
        }, context)
        _ = wi_curl_setopt_header(easy, { data, size, count, context in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().header(data!, size * count)
        }, context)
        return true
    }

    /// One header line, parsed on its bytes (this runs for every header of every response).
    private func header(_ data: UnsafeMutablePointer<CChar>, _ length: Int) -> Int {
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        var start = 0, end = length
        while start < end, HeaderBytes.isSpace(bytes[start]) { start += 1 }
        while end > start, HeaderBytes.isSpace(bytes[end - 1]) { end -= 1 }
        guard end > start else { return headersEnded(length) }
        if end - start >= 5, bytes[start] == 0x48, bytes[start + 1] == 0x54, bytes[start + 2] == 0x54, bytes[start + 3] == 0x50,
           bytes[start + 4] == 0x2F {   // "HTTP/": a new response (after a redirect or a 100 Continue)
            headers = [:]
            return length
        }
        guard let colon = (start..<end).first(where: { bytes[$0] == 0x3A }) else { return length }
        var valueStart = colon + 1
        while valueStart < end, HeaderBytes.isSpace(bytes[valueStart]) { valueStart += 1 }
        let name = String(unsafeUninitializedCapacity: colon - start) { buffer in
            for i in start..<colon { buffer[i - start] = HeaderBytes.lowercase(bytes[i]) }
            return colon - start
        }
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[valueStart..<end]), as: UTF8.self)
        // Room for a usual response's headers at once (growing 1, 2, 4, 8, 16 rehashed them four
        // times), and one hash per header unless the name repeats.
        if headers.isEmpty { headers.reserveCapacity(16) }
        if let existing = headers.updateValue(value, forKey: name) { headers[name] = existing + ", " + value }
        return length
    }

    /// The end of one response's headers. A redirect's target is judged here, before libcurl
    /// connects to it: http or https only, the configuration's `redirectFilter`, and through a
    /// proxy the address policy on the target's addresses. Returns 0 (abort) to refuse.
    private func headersEnded(_ length: Int) -> Int {
        guard configuration.maximumRedirects > 0, let easy, let location = headers["location"] else { return length }
        var code = 0
        _ = wi_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code)
        guard [301, 302, 303, 307, 308].contains(code) else { return length }
        var current: UnsafeMutablePointer<CChar>?
        _ = wi_curl_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &current)
        let base = current.map { String(cString: $0) } ?? requestURLString
        guard let target = CurlTransfer.resolve(location, against: base),
              target.scheme == "http" || target.scheme == "https", let url = URL(string: target.description),
              configuration.redirectFilter?(url) ?? true else {
            failure = ImageError.redirectNotAllowed(url: request.url, location: location)
            return 0
        }
        if configuration.addressPolicy.publicOnly, proxied, let refused = refusedTarget(target.description) {
            failure = refused
            return 0
        }
        return length
    }

    /// `location` read against `base` as libcurl follows it.
    static func resolve(_ location: String, against base: String) -> NormalizedURL? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, base, 0) == CURLUE_OK,
              curl_url_set(handle, CURLUPART_URL, location, 0) == CURLUE_OK else { return nil }
        var text: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, CURLUPART_URL, &text, 0) == CURLUE_OK, let text else { return nil }
        defer { curl_free(text) }
        return NormalizedURL(String(cString: text))
    }

    /// Through a proxy: the refusal of a target whose host resolves to an address the policy
    /// does not allow (resolved here, on the loader's thread), or nil.
    private func refusedTarget(_ text: String) -> ImageError? {
        guard let addressGuard, let target = NormalizedURL(text) else { return .invalidURL(text) }
        var host = target.host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if let zone = host.firstIndex(of: "%") { host = String(host[..<zone]) }
        guard wi_host_allowed(addressGuard.pointer, host) == 0 else { return nil }
        return .addressNotAllowed(url: request.url, address: addressGuard.refused ?? host)
    }

    private func receive(_ data: UnsafeMutablePointer<CChar>, _ length: Int) -> Int {
        if response == nil {
            if let error = sendResponse() {
                failure = error
                return 0   // aborts the transfer
            }
        }
        received += Int64(length)
        if received > Int64(configuration.maximumResponseSize) {
            failure = ImageError.responseTooLarge(url: request.url, limit: configuration.maximumResponseSize)
            return 0
        }
        if decryptor != nil || !streams {
            held.append(UnsafeRawPointer(data), count: length)
        } else {
            emit(.data(Data(bytes: data, count: length)))
        }
        if streams {
            let now = ContinuousClock.now
            if now - lastProgress >= configuration.minimumProgressInterval {
                lastProgress = now
                lastReported = received
                emit(.progress(ImageProgress(receivedBytes: received, expectedBytes: response?.expectedContentLength)))
            }
        }
        return length
    }

    /// Builds and checks the response; an error means the transfer must stop.
    private func sendResponse() -> (any Error)? {
        guard let easy else { return nil }
        var code = 0
        _ = wi_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code)
        var length: curl_off_t = -1
        _ = wi_curl_getinfo_offset(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        var effective: UnsafeMutablePointer<CChar>?
        _ = wi_curl_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective)
        // Parse the final URL only when a redirect changed it.
        let finalURL: URL
        if let effective, strcmp(effective, requestURLString) != 0 {
            finalURL = URL(string: String(cString: effective)) ?? request.url
        } else {
            finalURL = request.url
        }
        var built = ImageLoaderResponse(statusCode: code, headers: headers, expectedContentLength: length >= 0 ? Int64(length) : nil,
                                        url: finalURL)
        // A range request: a 206 continues the kept body (the callers see the whole body with a
        // 200); a 200 means the image changed and the body starts again.
        var prefix: Data?
        if let resuming, code == 206 {
            self.resuming = nil
            guard let range = ResumableDataStore.contentRange(headers["content-range"]), range.first == resuming.data.count else {
                return ImageError.network(url: request.url, reason: "the server resumed the body at another offset")
            }
            built.statusCode = 200
            built.expectedContentLength = range.total ?? built.expectedContentLength.map { $0 + Int64(resuming.data.count) }
            built.headers["content-length"] = built.expectedContentLength.map { String($0) }
            built.headers["content-range"] = nil
            prefix = resuming.data
        } else if resuming != nil, code == 200 || code == 416 || configuration.acceptableStatusCodes.contains(code) {
            // The image changed (200), the range was refused (416), or the response is a body of
            // its own: the kept part is of no use. Another status (a 5xx) keeps it for a retry.
            resuming = nil
        }
        // The modifier sees the response first (SDWebImage's order): what it returns is what
        // the checks judge, so a modifier that turns a 200 into a 404 fails the load as a 404.
        if let modifier = responseModifier {
            guard let modified = modifier(built) else {
                return ImageError.network(url: request.url, reason: "the response modifier refused the response")
            }
            built = modified
        }
        let status = built.statusCode
        let accepted = configuration.acceptableStatusCodes.contains(status) || (status == 304 && request.acceptsNotModified)
        guard accepted else {
            request.rejectedResponse?.record(built)
            return ImageError.badStatusCode(status, url: request.url)
        }
        if let types = configuration.acceptableContentTypes, !types.contains(built.mimeType ?? "") {
            return ImageError.invalidContentType(built.mimeType, url: request.url)
        }
        if let expected = built.expectedContentLength, expected > Int64(configuration.maximumResponseSize) {
            return ImageError.responseTooLarge(url: request.url, limit: configuration.maximumResponseSize)
        }
        response = built
        if let expected = built.expectedContentLength, !streams || decryptor != nil, expected > 0 {
            held.reserve(Int(expected))
        }
        if let prefix {
            prefix.withUnsafeBytes { held.append($0.baseAddress!, count: $0.count) }
            received = Int64(prefix.count)
        }
        emit(.response(built))
        lastReported = received
        emit(.progress(ImageProgress(receivedBytes: received, expectedBytes: built.expectedContentLength)))
        return nil
    }

    /// Ends the stream for libcurl's result.
    func complete(_ result: CURLcode) {
        if let failure {
            fail(failure)
            return
        }
        if result != CURLE_OK {
            fail(error(for: result))
            return
        }
        if response == nil, let error = sendResponse() {
            fail(error)
            return
        }
        if let decryptor, let response {
            do { held = BodyBuffer(try decryptor.decrypt(held.take(), response)) } catch {
                fail(error)
                return
            }
            if streams { emit(.data(held.take())) }
        }
        if let easy {
            metrics = measure(easy)
            if let metrics { request.metricsRecorder?.record(metrics) }
        }
        // The final count, unless the last throttled event already said it.
        if received != lastReported {
            emit(.progress(ImageProgress(receivedBytes: received, expectedBytes: response?.expectedContentLength)))
        }
        succeed()
    }

    /// What libcurl measured of the finished transfer.
    private func measure(_ easy: UnsafeMutableRawPointer) -> TransferMetrics {
        func time(_ info: CURLINFO) -> Duration {
            var microseconds: curl_off_t = 0
            _ = wi_curl_getinfo_offset(easy, info, &microseconds)
            return .microseconds(microseconds)
        }
        func number(_ info: CURLINFO) -> Int {
            var value = 0
            _ = wi_curl_getinfo_long(easy, info, &value)
            return value
        }
        var bytes: curl_off_t = 0
        _ = wi_curl_getinfo_offset(easy, CURLINFO_SIZE_DOWNLOAD_T, &bytes)
        let version = switch number(CURLINFO_HTTP_VERSION) {
        case Int(CURL_HTTP_VERSION_1_0): "1.0"
        case Int(CURL_HTTP_VERSION_2_0): "2"
        case Int(CURL_HTTP_VERSION_3): "3"
        default: "1.1"
        }
        return TransferMetrics(queued: (startedAt ?? queuedAt) - queuedAt, nameLookup: time(CURLINFO_NAMELOOKUP_TIME_T),
                               connect: time(CURLINFO_CONNECT_TIME_T), tlsHandshake: time(CURLINFO_APPCONNECT_TIME_T),
                               firstByte: time(CURLINFO_STARTTRANSFER_TIME_T), total: time(CURLINFO_TOTAL_TIME_T),
                               bytesReceived: Int64(bytes), reusedConnection: number(CURLINFO_NUM_CONNECTS) == 0,
                               httpVersion: version, redirects: number(CURLINFO_REDIRECT_COUNT))
    }

    private func error(for result: CURLcode) -> ImageError {
        let detail = String(cString: errorBuffer)
        let reason = detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail
        if result == CURLE_COULDNT_CONNECT, let refused = addressGuard?.refused { return .addressNotAllowed(url: request.url, address: refused) }
        switch result {
        case CURLE_OPERATION_TIMEDOUT: return .timedOut(url: request.url)
        case CURLE_FILESIZE_EXCEEDED: return .responseTooLarge(url: request.url, limit: configuration.maximumResponseSize)
        default: return .network(url: request.url, reason: reason)
        }
    }
}

/// ASCII helpers for header lines.
enum HeaderBytes {
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
    static func lowercase(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
}
extension CurlTransfer: QueuedByID {}

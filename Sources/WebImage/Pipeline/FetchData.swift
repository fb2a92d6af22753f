import Foundation

/// Stage 3, the bytes: one shared transfer per download key, streamed to the works that watch
/// progress, with progressive previews decoded as chunks arrive.
extension ImagePipeline {
    /// The body of `request`'s transfer, shared with every work of the same download key: in one
    /// piece, with progress for the works that watch it, or streamed into an incremental decoder
    /// for previews (`progressive`). This work subscribes at its own priority (the highest of
    /// its callers'), and the transfer waits in the loader's queue at the highest of its works'.
    func fetch(_ request: LoadRequest, loader: any ImageLoader, coders: ImageCoders, validators: CacheValidators?,
               progressive: Bool, work: SharedWork<ImageEvent, SharedResult>) async throws -> (Download, (any IncrementalImageDecoder)?) {
        let key = DownloadKey(request)
        let body = transferBody(request, loader: loader, validators: validators)
        guard progressive || work.hasEventSubscribers else {
            return (try await downloads.run(key, priority: work.priority, onEvent: nil, body: body), nil)
        }
        if !progressive {
            let download = try await downloads.run(key, replays: DownloadEvent.isReplayed, priority: work.priority, onEvent: { event in
                if case .progress(let progress) = event { work.send(.progress(progress)) }
            }, body: body)
            return (download, nil)
        }
        return try await fetchWithPreviews(request, key: key, coders: coders, work: work, body: body)
    }

    /// The body of `request`'s transfer in one piece, shared with every load of the same
    /// download key (image loads included), waiting in the loader's queue at `priority`: the
    /// fetch of a load that wants the bytes alone (`ImageManager.data(for:)`).
    func fetchBytes(_ request: LoadRequest, loader: any ImageLoader, validators: CacheValidators?,
                    priority: LoadPriority) async throws -> Download {
        try await downloads.run(DownloadKey(request), priority: priority, onEvent: nil,
                                body: transferBody(request, loader: loader, validators: validators))
    }

    /// What the shared transfer of `request` runs: the loader's request (with `validators`, at
    /// the transfer's priority, counted against the decode backlog), streamed when a work
    /// watches its events, tried again as the request's retry strategy says.
    private func transferBody(_ request: LoadRequest, loader: any ImageLoader, validators: CacheValidators?)
        -> @Sendable (SharedWork<DownloadEvent, Download>) async throws -> Download {
        let (backlog, limiter, metrics, downloads, events) = (self.backlog, rateLimiter, self.metrics, self.downloads, self.events)
        return { transfer in
            metrics.transfers(downloads.count)
            defer { metrics.transfers(downloads.count - 1) }
            return try await ImagePipeline.transfer(request.loaderRequest(validators: validators, priority: transfer.priority, backlog: backlog),
                                                    loader: loader, streaming: transfer.hasEventSubscribers,
                                                    transfer: transfer, retry: request.settings.retry, limiter: limiter, metrics: metrics,
                                                    events: events)
        }
    }

    /// A transfer streamed into an incremental decoder, previews sent as they come. Apart from
    /// `fetch` (never inlined): its task group and decoder would size the frame that every
    /// load waiting for its transfer holds.
    @inline(never)
    private func fetchWithPreviews(_ request: LoadRequest, key: DownloadKey, coders: ImageCoders,
                                   work: SharedWork<ImageEvent, SharedResult>,
                                   body: @escaping @Sendable (SharedWork<DownloadEvent, Download>) async throws -> Download)
        async throws -> (Download, (any IncrementalImageDecoder)?) {
        let (chunks, feed) = AsyncStream<DownloadEvent>.makeStream()
        let downloads = self.downloads
        return try await withThrowingTaskGroup(of: Download.self) { group in
            group.addTask {
                defer { feed.finish() }
                return try await downloads.run(key, replays: DownloadEvent.isReplayed, priority: work.priority, onEvent: { feed.yield($0) }, body: body)
            }
            var previewer = Previewer(request: request, coders: coders)
            let keptPreviews = KeptPreviews(request)
            if let kept = keptPreviews?.last() { work.send(.preview(kept)) }
            // The loader throttles its progress events; a preview can come before the first
            // one. Each preview is preceded by the byte count it was decoded from, so that
            // progress never lags behind what the previews show.
            // A loader event older than what was already reported is dropped (never backwards).
            var received: Int64 = 0, reported: Int64 = -1, expected: Int64?
            for await event in chunks {
                switch event {
                case .progress(let progress):
                    let known = expected
                    expected = progress.expectedBytes ?? expected
                    guard progress.receivedBytes > reported || (progress.receivedBytes == reported && known != expected) else { continue }
                    reported = progress.receivedBytes
                    work.send(.progress(progress))
                case .data(let chunk, let offset):
                    // A work that joined the transfer late missed the first chunks (they are not
                    // kept for replay: the body is held once, by the transfer): no previews then,
                    // the final image is decoded from the whole body.
                    if offset != received { previewer.stop() }
                    received = offset + Int64(chunk.count)
                    if let preview = previewer.add(chunk, isLast: expected.map { received >= $0 } ?? false) {
                        if received > reported {
                            reported = received
                            work.send(.progress(ImageProgress(receivedBytes: received, expectedBytes: expected)))
                        }
                        let shown = (try? transformPreview(preview, request: request)) ?? preview
                        keptPreviews?.keep(shown)
                        work.send(.preview(shown))
                    }
                }
            }
            let download = try await group.next()!
            return (download, previewer.finished())
        }
    }

    /// The transfer, tried again as `retry` says (a retried stream starts again at offset 0:
    /// the previews stop and the final image is decoded from the whole body).
    /// Each attempt to a remote loader first takes a token from `limiter` (file and data URLs
    /// are not limited).
    static func transfer(_ request: ImageLoaderRequest, loader: any ImageLoader, streaming: Bool,
                         transfer: SharedWork<DownloadEvent, Download>, retry: RetryStrategy?, limiter: RateLimiter?,
                         metrics: LoadMetrics, events: LoadEventHub) async throws -> Download {
        let limiter = loader.capabilities.contains(.local) ? nil : limiter
        guard let retry else {
            try await limiter?.wait()
            return try await self.transfer(request, loader: loader, streaming: streaming, transfer: transfer, metrics: metrics,
                                           events: events)
        }
        return try await retried(request, loader: loader, streaming: streaming, transfer: transfer, retry: retry, limiter: limiter,
                                 metrics: metrics, events: events)
    }

    /// The transfer, tried again as `retry` says. Apart (never inlined): the retry's closures
    /// would size the frame of every transfer.
    @inline(never)
    private static func retried(_ request: ImageLoaderRequest, loader: any ImageLoader, streaming: Bool,
                                transfer: SharedWork<DownloadEvent, Download>, retry: RetryStrategy, limiter: RateLimiter?,
                                metrics: LoadMetrics, events: LoadEventHub) async throws -> Download {
        try await retry.run { recorder in
            try await limiter?.wait()
            var attempt = request
            attempt.rejectedResponse = recorder
            return try await self.transfer(attempt, loader: loader, streaming: streaming, transfer: transfer, metrics: metrics,
                                           events: events)
        }
    }

    /// One transfer: streamed (progress and chunks to the subscribers) or in one piece; its
    /// response carries the loader's metrics.
    static func transfer(_ request: ImageLoaderRequest, loader: any ImageLoader, streaming: Bool,
                         transfer: SharedWork<DownloadEvent, Download>, metrics: LoadMetrics, events: LoadEventHub) async throws -> Download {
        var request = request
        let recorder = TransferMetricsRecorder()
        request.metricsRecorder = recorder
        started(request.url, events: events)
        var download: Download
        do {
            download = try await self.transfer(recorded: request, loader: loader, streaming: streaming, transfer: transfer)
        } catch {
            failed(request.url, error, events: events)
            throw error
        }
        finished(&download, request.url, recorder: recorder, metrics: metrics, events: events)
        return download
    }

    // The bookkeeping of a transfer, out of line: in the async function, the events and the
    // metrics' temporaries made its frame too large for the task's memory slab (each call then
    // allocated one with malloc).

    @inline(never)
    private static func started(_ url: URL, events: LoadEventHub) {
        events.send(.downloadStarted(url))
    }

    @inline(never)
    private static func failed(_ url: URL, _ error: any Error, events: LoadEventHub) {
        events.send(.downloadFailed(url, error: error))
    }

    @inline(never)
    private static func finished(_ download: inout Download, _ url: URL, recorder: TransferMetricsRecorder, metrics: LoadMetrics,
                                 events: LoadEventHub) {
        if download.response.measured == nil, let measured = recorder.metrics { download.response.measured = MeasuredTransfer(measured) }
        metrics.downloaded(download.data.count)
        if let measured = download.response.measured { metrics.recordTransfer(measured.metrics) }
        events.send(.downloadFinished(url, bytes: download.data.count, metrics: download.response.metrics))
    }

    private static func transfer(recorded request: ImageLoaderRequest, loader: any ImageLoader, streaming: Bool,
                                 transfer: SharedWork<DownloadEvent, Download>) async throws -> Download {
        var download = try await self.transfer(unmodified: request, loader: loader, streaming: streaming, transfer: transfer)
        if request.responseModifier != nil { try modify(&download, request, loader: loader) }
        return download
    }

    /// A loader that does not apply the response modifier itself has it applied here: the
    /// response the stages act on is the modified one, whoever loaded it.
    @inline(never)
    private static func modify(_ download: inout Download, _ request: ImageLoaderRequest, loader: any ImageLoader) throws {
        guard let modifier = request.responseModifier, !loader.capabilities.contains(.appliesResponseModifier) else { return }
        guard let modified = modifier(download.response) else {
            throw ImageError.network(url: request.url, reason: "the response modifier refused the response")
        }
        download.response = modified
    }

    private static func transfer(unmodified request: ImageLoaderRequest, loader: any ImageLoader, streaming: Bool,
                                 transfer: SharedWork<DownloadEvent, Download>) async throws -> Download {
        guard streaming else {
            let (data, response) = try await loader.data(for: request)
            transfer.send(.progress(ImageProgress(receivedBytes: Int64(data.count), expectedBytes: Int64(data.count))))
            return Download(data: data, response: response)
        }
        return try await streamed(request, loader: loader, transfer: transfer)
    }

    /// A transfer whose chunks and progress go to the work's subscribers as they come.
    @inline(never)
    private static func streamed(_ request: ImageLoaderRequest, loader: any ImageLoader,
                                 transfer: SharedWork<DownloadEvent, Download>) async throws -> Download {
        var offset: Int64 = 0
        let (body, response) = try await loader.gatherBody(of: request) { event in
            switch event {
            case .response: break
            case .data(let chunk):
                transfer.send(.data(chunk, offset: offset))
                offset += Int64(chunk.count)
            case .progress(let progress): transfer.send(.progress(progress))
            }
        }
        return Download(data: body, response: response)
    }
}

extension ImagePipeline.Download {
    /// The rules of a transfer's answer that every load follows (an image's, an alternative
    /// source's, a data load's): a 304 answers only a load that revalidates a cached entry
    /// (`revalidating`), and a body must not be empty.
    /// - Returns: true for a 304 to a revalidation (the cached entry stays, refreshed).
    /// - Throws: `ImageError.badStatusCode(304)` for a 304 nobody asked for; `.emptyData` for an
    ///   empty body.
    func isNotModified(revalidating: Bool, _ request: LoadRequest) throws -> Bool {
        if response.statusCode == 304 {
            guard revalidating else { throw ImageError.badStatusCode(304, url: request.url) }
            return true
        }
        guard !data.isEmpty else { throw ImageError.decodingFailed(.emptyData, source: request.urlString, byteCount: 0) }
        return false
    }
}

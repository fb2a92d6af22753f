import Foundation

/// Feeds downloaded chunks to an incremental decoder and hands out a preview at most once per
/// `previewInterval`, the first one interval after the first bytes (a load that completes
/// sooner shows no preview: its final image comes as fast, and the decode is not spent on a
/// preview). No preview is made from the last bytes: it would be the final image. Used by one
/// task (the shared work) at a time.
///
/// Chunks are handed to the decoder in batches: when a preview is due, when `batchBytes` are
/// waiting, with the last chunk, and at `finished()`. A decoder asked to go on from a few bytes
/// redoes its unfinished unit each time (libwebp retries the current macroblock row), so a source
/// that sends a byte at a time would otherwise cost a row's work per byte. A due preview that
/// the data cannot give yet (no new rows) is tried again a quarter of an interval later, not at
/// the next chunk, for the same reason.
struct Previewer {
    private var decoder: (any IncrementalImageDecoder)?
    private var prefix = Data()
    /// Chunks not yet given to the decoder, and their size.
    private var pending: [Data] = []
    private var pendingBytes = 0
    /// The most bytes kept back from the decoder between previews.
    static let batchBytes = 256 << 10
    private var failed = false
    /// When the next preview is due: an interval after the first bytes or the last preview, a
    /// quarter of one after a preview the data could not give.
    private var nextPreview: ContinuousClock.Instant?
    private let interval: Duration
    private let options: ImageDecodingOptions
    private let coder: (any ImageCoder)?
    private let coders: ImageCoders
    /// The call's context, handed to the coder.
    private let context: ImageContext

    init(request: LoadRequest, coders: ImageCoders) {
        context = request.context
        interval = request.previewInterval
        options = request.decodeOptions
        coder = request.coder
        self.coders = coders
    }

    /// No more previews, and no decoder for the final image (a chunk was missed).
    mutating func stop() {
        failed = true
        decoder = nil
        pending = []
    }

    /// The decoder for the final image, given every chunk added (nil when there is none, or it
    /// failed: the final image is then decoded from the whole body).
    mutating func finished() -> (any IncrementalImageDecoder)? {
        if let decoder, !failed { feedPending(decoder) }
        return failed ? nil : decoder
    }

    /// Adds a chunk; returns a preview when one is due and the data so far gives one.
    /// `isLast`: the chunk completes the announced length.
    mutating func add(_ chunk: Data, isLast: Bool = false) -> PartialImage? {
        guard !failed else { return nil }
        if nextPreview == nil { nextPreview = ContinuousClock.now + interval }
        if decoder == nil {
            prefix.append(chunk)
            guard prefix.count >= 16 else { return nil }
            if let coder, coder.canDecode(prefix) {
                decoder = coder.makeIncrementalDecoder(options: options, context: context)
            } else {
                decoder = coders.makeIncrementalDecoder(for: prefix, options: options, context: context)
            }
            guard decoder != nil else {
                failed = true
                return nil
            }
            pending = [prefix]
            pendingBytes = prefix.count
            prefix = Data()
        } else {
            pending.append(chunk)
            pendingBytes += chunk.count
        }
        let now = ContinuousClock.now
        let due = !isLast && nextPreview.map { now >= $0 } ?? true
        guard due || isLast || pendingBytes >= Previewer.batchBytes, let decoder else { return nil }
        guard feedPending(decoder), due else { return nil }
        guard let preview = try? decoder.preview() else {
            nextPreview = now + interval / 4
            return nil
        }
        nextPreview = now + interval
        return preview
    }

    /// Gives the waiting chunks to `decoder` in one piece; false when it failed (corrupt or too
    /// large: no previews, and the final decode reports the error).
    @discardableResult
    private mutating func feedPending(_ decoder: any IncrementalImageDecoder) -> Bool {
        guard !pending.isEmpty else { return true }
        let bytes = pending.count == 1 ? pending[0] : pending.reduce(into: Data(capacity: pendingBytes)) { $0.append($1) }
        pending = []
        pendingBytes = 0
        do {
            try decoder.append(bytes)
            return true
        } catch {
            failed = true
            self.decoder = nil
            return false
        }
    }
}

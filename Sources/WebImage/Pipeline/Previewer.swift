import Foundation

/// Feeds downloaded chunks to an incremental decoder and hands out a preview at most once per
/// `previewInterval`, the first one interval after the first bytes (a load that completes
/// sooner shows no preview: its final image comes as fast, and the decode is not spent on a
/// preview). No preview is made from the last bytes: it would be the final image. Used by one
/// task (the shared work) at a time.
struct Previewer {
    private(set) var decoder: (any IncrementalImageDecoder)?
    private var prefix = Data()
    private var failed = false
    /// When the last preview was made, or the first bytes arrived.
    private var lastPreview: ContinuousClock.Instant?
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
    }

    /// Adds a chunk; returns a preview when one is due and the data so far gives one.
    /// `isLast`: the chunk completes the announced length.
    mutating func add(_ chunk: Data, isLast: Bool = false) -> PartialImage? {
        guard !failed else { return nil }
        if lastPreview == nil { lastPreview = ContinuousClock.now }
        if decoder == nil {
            prefix.append(chunk)
            guard prefix.count >= 16 else { return nil }
            if let coder, coder.canDecode(prefix) {
                decoder = coder.makeIncrementalDecoder(options: options, context: context)
            } else {
                decoder = coders.makeIncrementalDecoder(for: prefix, options: options, context: context)
            }
            guard let decoder else {
                failed = true
                return nil
            }
            let first = prefix
            prefix = Data()
            return feed(decoder, first, isLast: isLast)
        }
        return feed(decoder!, chunk, isLast: isLast)
    }

    private mutating func feed(_ decoder: any IncrementalImageDecoder, _ bytes: Data, isLast: Bool) -> PartialImage? {
        do {
            try decoder.append(bytes)
        } catch {
            // Corrupt or too large: no previews; the final decode reports the error.
            failed = true
            self.decoder = nil
            return nil
        }
        let now = ContinuousClock.now
        if isLast { return nil }
        if let lastPreview, now - lastPreview < interval { return nil }
        guard let preview = try? decoder.preview() else { return nil }
        lastPreview = now
        return preview
    }
}

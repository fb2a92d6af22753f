import Foundation

/// Feeds downloaded chunks to an incremental decoder and hands out a preview at most once per
/// `previewInterval`. Used by one task (the shared work) at a time.
struct Previewer {
    private(set) var decoder: (any IncrementalImageDecoder)?
    private var prefix = Data()
    private var failed = false
    private var lastPreview: ContinuousClock.Instant?
    private let interval: Duration
    private let options: ImageDecodingOptions
    private let coder: (any ImageCoder)?
    private let coders: ImageCoders

    init(request: LoadRequest, coders: ImageCoders) {
        interval = request.previewInterval
        options = request.decodeOptions
        coder = request.coder
        self.coders = coders
    }

    /// Adds a chunk; returns a preview when one is due and the data so far gives one.
    mutating func add(_ chunk: Data) -> PartialImage? {
        guard !failed else { return nil }
        if decoder == nil {
            prefix.append(chunk)
            guard prefix.count >= 16 else { return nil }
            if let coder, coder.canDecode(prefix) {
                decoder = coder.makeIncrementalDecoder(options: options)
            } else {
                decoder = coders.makeIncrementalDecoder(for: prefix, options: options)
            }
            guard let decoder else {
                failed = true
                return nil
            }
            let first = prefix
            prefix = Data()
            return feed(decoder, first)
        }
        return feed(decoder!, chunk)
    }

    private mutating func feed(_ decoder: any IncrementalImageDecoder, _ bytes: Data) -> PartialImage? {
        do {
            try decoder.append(bytes)
        } catch {
            // Corrupt or too large: no previews; the final decode reports the error.
            failed = true
            self.decoder = nil
            return nil
        }
        let now = ContinuousClock.now
        if let lastPreview, now - lastPreview < interval { return nil }
        guard let preview = try? decoder.preview() else { return nil }
        lastPreview = now
        return preview
    }
}

import Foundation

/// What `ImageManager.events(for:)` reports while one image loads.
public enum ImageEvent: Sendable {
    /// Bytes received so far (at the start, at most every loader progress interval, and at the end).
    case progress(ImageProgress)
    /// A partial image decoded from the bytes so far (with `.progressiveLoad`); never cached.
    case preview(PartialImage)
    /// With `.refreshCached`: the cached image (its `cacheType` `.memory` or `.disk`), before
    /// the server is asked whether it changed, as SDWebImage calls its completion block with it
    /// first. `.finished` follows with the fresh image (`cacheType` `.none`), or with the cached
    /// one again when the server answers 304 Not Modified.
    case cached(ImageResult)
    /// The final image.
    case finished(ImageResult)
}

/// The outcome of one load.
public struct ImageResult: Sendable {
    /// The decoded (and transformed) image.
    public var image: Image
    /// The encoded data: the downloaded bytes of an untransformed image, the disk bytes of a
    /// disk hit, or with `.queryMemoryData` of a memory hit; nil otherwise.
    public var data: Data?
    /// Where the image came from: `.none` for the loader, `.memory` or `.disk` for a cache.
    public var cacheType: ImageCacheType
    /// The URL that was asked for.
    public var url: URL
    /// The URL whose bytes made the image: `url`, or the alternative source that served them
    /// when `url` failed (`ImageContext.alternativeSources`).
    public var sourceURL: URL {
        get { alternativeSource ?? url }
        set { alternativeSource = newValue == url ? nil : newValue }
    }
    /// The source when it is not `url` (kept apart so that a memory hit's result stays small).
    private var alternativeSource: URL?
    /// What the transfer took when the image was downloaded by `HTTPImageLoader`: queue wait,
    /// DNS, connect, TLS, first byte, total, bytes, connection reuse, HTTP version; nil for a
    /// cache hit or another loader.
    public var transferMetrics: TransferMetrics? {
        get { measured?.metrics }
        set { measured = newValue.map(MeasuredTransfer.init) }
    }
    /// The metrics, boxed: a memory hit's result carries one nil reference, not ten fields
    /// (the response's box is passed on as it is).
    var measured: MeasuredTransfer?
    /// Why the image was not cached on disk as asked (a full or read-only disk, an unwritable
    /// cache directory), when the stores ran before this result was given (`.waitStoreCache`); nil
    /// when they succeeded, or when they run in the background (then a failure is logged).
    public var storeFailure: ImageError?
    /// The origin's caching rules for this image, as of when the result was made (under
    /// `.respectHeaders`, for a result from the network or the disk): what an image server
    /// passes downstream. Nil for a memory hit, or when the headers are ignored.
    public var freshness: HTTPFreshness? {
        get { fresh?.value }
        set { fresh = newValue.map(BoxedFreshness.init) }
    }
    private var fresh: BoxedFreshness?

    /// The result of a cache hit for `url`.
    public init(_ hit: ImageCacheResult, url: URL) {
        self.init(image: hit.image, data: hit.data, cacheType: hit.cacheType, url: url)
    }

    /// A result.
    public init(image: Image, data: Data?, cacheType: ImageCacheType, url: URL) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.url = url
    }
}

/// Freshness in a box of its own (see `ImageResult.freshness`).
private final class BoxedFreshness: Sendable {
    let value: HTTPFreshness
    init(_ value: HTTPFreshness) { self.value = value }
}


/// How one load behaves (SDWebImage's `SDWebImageOptions`). Options that only choose a
/// callback queue or a view's behaviour have no meaning here and are left out.
public struct ImageOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: UInt32

    /// An option set from its raw bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Load a URL even when it failed before in a way that blacklisted it.
    public static let retryFailed = ImageOptions(rawValue: 1 << 0)
    /// Start the download after others waiting in the loader's queue.
    public static let lowPriority = ImageOptions(rawValue: 1 << 1)
    /// Start the download before others waiting in the loader's queue.
    public static let highPriority = ImageOptions(rawValue: 1 << 2)
    /// Decode the image while it downloads and report partial images as `ImageEvent.preview`.
    public static let progressiveLoad = ImageOptions(rawValue: 1 << 3)
    /// Skip a cache hit and download again; a 304 Not Modified keeps the cached image.
    public static let refreshCached = ImageOptions(rawValue: 1 << 4)
    /// Send and store cookies in the loader's cookie store.
    public static let handleCookies = ImageOptions(rawValue: 1 << 5)
    /// Accept TLS certificates that do not verify (for test servers; never in production).
    public static let allowInvalidSSLCertificates = ImageOptions(rawValue: 1 << 6)
    /// Apply the context's transformer to animated images too (by default they are returned untransformed).
    public static let transformAnimatedImage = ImageOptions(rawValue: 1 << 7)
    /// Decode large images at a bounded size (`ImageContext.scaleDownLimitBytes`, default 60 MB of pixels).
    public static let scaleDownLargeImages = ImageOptions(rawValue: 1 << 8)
    /// On a memory hit, also read the encoded data from the disk cache.
    public static let queryMemoryData = ImageOptions(rawValue: 1 << 9)
    /// Only look in the caches; a miss fails with `ImageError.notInCache`.
    public static let fromCacheOnly = ImageOptions(rawValue: 1 << 10)
    /// Skip the caches and load (the result is still stored).
    public static let fromLoaderOnly = ImageOptions(rawValue: 1 << 11)
    /// Decode no more than the result needs now: frames after the first stay lazy (overriding
    /// `.preloadAllFrames`) and no progressive previews are decoded.
    public static let avoidDecodeImage = ImageOptions(rawValue: 1 << 12)
    /// Decode only the first frame of an animated image.
    public static let decodeFirstFrameOnly = ImageOptions(rawValue: 1 << 13)
    /// Decode every frame of an animated image before returning it.
    public static let preloadAllFrames = ImageOptions(rawValue: 1 << 14)
    /// Return only after the disk cache has written the image (by default the write finishes in the background).
    public static let waitStoreCache = ImageOptions(rawValue: 1 << 15)

    /// Every option above, each once, in the order of its bit: what walks every option (tests,
    /// descriptions) reads this list. A new option is added here with its declaration.
    static let every: [ImageOptions] = [
        .retryFailed, .lowPriority, .highPriority, .progressiveLoad, .refreshCached, .handleCookies,
        .allowInvalidSSLCertificates, .transformAnimatedImage, .scaleDownLargeImages, .queryMemoryData,
        .fromCacheOnly, .fromLoaderOnly, .avoidDecodeImage, .decodeFirstFrameOnly, .preloadAllFrames,
        .waitStoreCache,
    ]
}

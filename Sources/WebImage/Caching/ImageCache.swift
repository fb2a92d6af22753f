import Foundation

/// The default `ImageCaching`: a memory layer in front of a disk layer (SDWebImage's
/// `SDImageCache`), by default a `MemoryCache` and a `DiskCache`; either may be one's own
/// (`ImageMemoryCaching`, `ImageDiskCaching`).
///
/// A memory hit costs no hop (the memory cache's entries are under a lock). A disk hit is read
/// on the disk cache's own thread, decoded on the cooperative pool (CPU work), and put into
/// memory; concurrent queries of the same key share one read and one decode. A disk entry that does not decode is deleted and
/// reported as a miss.
public final class ImageCache: ImageCaching {
    /// The cache the library uses by default: namespace "default" in the user cache directory.
    public static let shared = ImageCache(namespace: "default")

    /// The memory layer.
    public let memory: any ImageMemoryCaching
    /// The disk layer.
    public let disk: any ImageDiskCaching
    /// The memory layer when it is the library's `MemoryCache` (its limits and counts).
    public var memoryCache: MemoryCache? { libraryMemory?.takeUnretainedValue() }
    /// `memory` when it is a `MemoryCache`, held without a count of its own: `memory` holds it
    /// for as long as this cache lives, and a memory hit then takes no retain and release.
    private let libraryMemory: Unmanaged<MemoryCache>?
    /// The disk layer when it is the library's `DiskCache` (its folder and cleanup).
    public var diskCache: DiskCache? { disk as? DiskCache }
    /// The configuration this cache was made with.
    public let config: ImageCacheConfig
    /// The coders used to decode disk hits and to encode images stored without data.
    public let coders: ImageCoders
    /// Disk queries in flight: concurrent queries of one key (and decode options) share one read
    /// and one decode; a query whose callers all leave is cancelled (the same table as the
    /// manager's loads).
    private let diskQueries = InFlightTable<DiskQueryKey, Never, ImageCacheResult?>()
    private let watcher: MemoryPressureWatcher?

    /// A cache named `namespace`, in `directory` (default
    /// `$XDG_CACHE_HOME/com.webimage.cache/<namespace>`). Named instances with different
    /// directories are independent.
    ///
    /// The namespace names one folder and never a path: a namespace that is not plain (see
    /// `validate(namespace:)`) is escaped into a single folder name, so `".."` or `"a/../b"`
    /// cannot reach outside `com.webimage.cache`. Call `validate(namespace:)` first to reject
    /// such names with a clear error instead (the `webimage` CLI does).
    public convenience init(namespace: String, directory: URL? = nil, config: ImageCacheConfig = .init(),
                            coders: ImageCoders = .shared) {
        let memory = MemoryCache(configuration: .init(costLimit: config.maxMemoryCost, countLimit: config.maxMemoryCount,
                                                      usesWeakCache: config.shouldUseWeakMemoryCache),
                                 metricsName: namespace)
        let disk = DiskCache(directory: directory ?? DiskCache.defaultDirectory(namespace: namespace),
                             configuration: .init(maxAge: config.maxDiskAge, maxSize: config.maxDiskSize,
                                                  expireType: config.diskCacheExpireType, cleanupInterval: config.cleanupInterval,
                                                  additionalDirectories: config.additionalCacheDirectories))
        self.init(memory: memory, disk: disk, config: config, coders: coders)
    }

    /// A cache over layers made by the caller, the library's or one's own (their own
    /// configurations apply; `config` supplies `shouldCacheImagesInMemory` and
    /// `watchesMemoryPressure`).
    public init(memory: any ImageMemoryCaching, disk: any ImageDiskCaching, config: ImageCacheConfig = .init(),
                coders: ImageCoders = .shared) {
        self.config = config
        self.coders = coders
        self.memory = memory
        libraryMemory = (memory as? MemoryCache).map { Unmanaged.passUnretained($0) }
        self.disk = disk
        if config.watchesMemoryPressure {
            let watcher = MemoryPressureWatcher()
            let memory = self.memory
            Task { await watcher.start { await ImageCache.relieveMemoryPressure(memory) } }
            self.watcher = watcher
        } else {
            watcher = nil
        }
    }

    deinit {
        if let watcher { Task { await watcher.stop() } }
    }

    /// Checks that `namespace` is a plain folder name: not empty, no `/`, backslash or control
    /// character (NUL included), no leading dot (so neither `.` nor `..`), at most 255 bytes.
    /// - Throws: `ImageError.invalidNamespace` saying which rule it breaks.
    public static func validate(namespace: String) throws(ImageError) {
        func invalid(_ reason: String) -> ImageError { .invalidNamespace(namespace, reason: reason) }
        if namespace.isEmpty { throw invalid("it is empty") }
        if namespace == "." || namespace == ".." { throw invalid("it names a folder (. or ..), not a cache") }
        if namespace.hasPrefix(".") { throw invalid("it starts with a dot") }
        if namespace.contains("/") || namespace.contains("\\") { throw invalid("it contains a path separator") }
        if namespace.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw invalid("it contains a control character")
        }
        if namespace.utf8.count > 255 { throw invalid("it is longer than 255 bytes") }
    }

    /// What memory pressure empties: `memory` (SDWebImage's reaction to a memory warning) and
    /// the recycled pixel buffers.
    static func relieveMemoryPressure(_ memory: any ImageMemoryCaching) async {
        memory.handleMemoryPressure()
        PixelBufferPool.drain()
    }

    // MARK: - ImageCaching

    /// A disk hit goes into memory only when the query's store type includes memory (and
    /// `shouldCacheImagesInMemory` is on); a disk hit's data and extended data come in one
    /// trip to the disk thread. A memory hit is given as `query.options` would decode it (a
    /// still for a first-frame query). Concurrent queries of one key share one read and one
    /// decode unless the query says otherwise (`sharesConcurrentReads`).
    public func image(forKey key: String, query: ImageCacheQuery) async -> ImageCacheResult? {
        if key.isEmpty { return nil }
        let scope = query.scope, options = query.options
        if scope.includesMemory, let stored = memoryImage(forKey: key) {
            let image = stored.matching(options)
            let wantsData = query.includingData && scope.includesDisk
            // The hot path: a memory hit that needs nothing from the disk.
            guard wantsData || query.includingExtendedData else { return ImageCacheResult(image: image, data: nil, cacheType: .memory) }
            let entry = await disk.entry(forKey: key, includingData: wantsData, includingExtendedData: query.includingExtendedData)
            return ImageCacheResult(image: image, data: entry?.data, cacheType: .memory, extendedData: entry?.extendedData)
        }
        guard scope.includesDisk, !Task.isCancelled else { return nil }
        let disk = self.disk, coders = self.coders, extended = query.includingExtendedData, context = query.context
        let hit: ImageCacheResult?
        if query.sharesConcurrentReads {
            hit = try? await diskQueries.run(DiskQueryKey(key: key, options: options, extended: extended), onEvent: nil) { _ in
                try await ImageCache.readAndDecode(key, disk: disk, coders: coders, options: options, context: context, extended: extended)
            }
        } else {
            hit = try? await ImageCache.readAndDecode(key, disk: disk, coders: coders, options: options, context: context, extended: extended)
        }
        // Promotion is each query's own decision (concurrent queries share the read and decode).
        if let hit, config.shouldCacheImagesInMemory, query.storeType.includesMemory { memory.setImage(hit.image, forKey: key, cost: nil, lifetime: nil) }
        return hit
    }

    /// Disk queries in flight in the shared table (for tests).
    var sharedDiskQueryCount: Int { diskQueries.count }

    /// The disk entry of `key` decoded with `options` (with its extended data when `extended`),
    /// or nil; an entry that does not decode is removed. Checks cancellation before the read
    /// and before the decode.
    private static func readAndDecode(_ key: String, disk: any ImageDiskCaching, coders: ImageCoders, options: ImageDecodingOptions,
                                      context: ImageContext, extended: Bool) async throws -> ImageCacheResult? {
        try Task.checkCancellation()
        guard let entry = await disk.entry(forKey: key, includingData: true, includingExtendedData: extended),
              let data = entry.data else { return nil }
        try Task.checkCancellation()   // every caller left during the read: no decode
        let image: Image
        do { image = try await coders.decode(data, options: options, context: context) } catch {
            // Every caller left during an isolated decode: the entry is not to blame.
            if error is CancellationError { throw error }
            // Truncated or not an image: the entry is useless, drop it.
            await disk.removeData(forKey: key)
            return nil
        }
        return ImageCacheResult(image: image, data: data, cacheType: .disk, extendedData: entry.extendedData)
    }

    /// Its memory answers without suspending.
    public var capabilities: ImageCacheCapabilities { .synchronousMemory }

    /// The image in the memory layer under `key`, without suspending and without touching the
    /// disk (SDWebImage's `imageFromMemoryCacheForKey:`, Kingfisher's
    /// `retrieveImageInMemoryCache`); nil when it is not there.
    public func cachedImage(forKey key: String) -> Image? {
        key.isEmpty ? nil : memoryImage(forKey: key)
    }

    /// The memory layer's image under `key`: the library's layer called directly, as the
    /// concrete class it is (a memory hit is on every image call's path), another through its
    /// protocol.
    private func memoryImage(forKey key: String) -> Image? {
        if let libraryMemory { return libraryMemory._withUnsafeGuaranteedRef { $0.image(forKey: key) } }
        return memory.image(forKey: key)
    }

    /// Puts `image` into the memory layer at once (no suspension), as a store to `.memory`
    /// would; false when the configuration keeps nothing in memory or the key is empty.
    public func storeInMemoryNow(_ image: Image, forKey key: String) -> Bool {
        storeInMemoryNow(image, forKey: key, lifetime: nil)
    }

    /// Puts `image` into the memory layer at once for at most `lifetime` (see
    /// `MemoryCache.setImage(_:forKey:cost:lifetime:)`); false when nothing was stored.
    public func storeInMemoryNow(_ image: Image, forKey key: String, lifetime: Duration?) -> Bool {
        guard !key.isEmpty, config.shouldCacheImagesInMemory else { return false }
        memory.setImage(image, forKey: key, cost: nil, lifetime: lifetime)
        return lifetime.map { $0 > .zero } ?? true
    }

    /// Stores `image` in memory (when the configuration keeps images there) and its data, or
    /// the image encoded, on disk, with the disk entry's extended data written in the same step
    /// (see `DiskCache.store(_:extendedData:forKey:)`): after a crash the entry has the data and
    /// metadata of one store, never a mix. The context is not read.
    public func store(_ image: Image?, data: Data?, extendedData: Data?, forKey key: String,
                      to destination: ImageCacheType, context: ImageContext) async throws {
        if key.isEmpty { return }
        if destination.includesMemory, config.shouldCacheImagesInMemory, let image {
            memory.setImage(image, forKey: key, cost: nil, lifetime: nil)
        }
        guard destination.includesDisk else { return }
        let bytes: Data
        if let data {
            bytes = data
        } else if let image {
            bytes = try ImageCache.encodeForDisk(image, coders: coders)
        } else {
            return
        }
        try await disk.store(bytes, extendedData: extendedData, forKey: key)
    }

    /// The encoding used when an image is stored without data: its source format, else PNG
    /// when it has transparency, else JPEG. An animation is never flattened into a still: it
    /// stays GIF, WebP or PNG (APNG) when it came from one, and is a GIF otherwise (as
    /// SDWebImage falls back to GIF for animated images).
    static func encodeForDisk(_ image: Image, coders: ImageCoders) throws -> Data {
        try coders.encode(image, as: diskFormat(for: image))
    }

    /// The format an image is stored in when it comes without its bytes (see `encodeForDisk`).
    static func diskFormat(for image: Image) -> ImageFormat {
        if image.isAnimated { return [.gif, .webp, .png].contains(image.format) ? image.format : .gif }
        return image.format.isDecodable ? image.format : (image.bitmap.hasTransparency ? .png : .jpeg)
    }

    public func removeImage(forKey key: String, from scope: ImageCacheType = .all) async {
        if scope.includesMemory { memory.removeImage(forKey: key) }
        if scope.includesDisk { await disk.removeData(forKey: key) }
    }

    public func containsImage(forKey key: String, in scope: ImageCacheType = .all) async -> ImageCacheType {
        let inMemory = scope.includesMemory ? memory.contains(key) : false
        let onDisk = scope.includesDisk ? await disk.contains(key) : false
        return ImageCacheType(memory: inMemory, disk: onDisk)
    }

    public func clear(_ scope: ImageCacheType) async {
        if scope.includesMemory { memory.removeAll() }
        if scope.includesDisk { await disk.removeAll() }
    }

    public func extendedData(forKey key: String) async -> Data? {
        await disk.extendedData(forKey: key)
    }

    /// The bytes on disk under `key`, read on the disk cache's thread and not decoded.
    public func data(forKey key: String) async -> Data? {
        await disk.data(forKey: key)
    }

    public func setExtendedData(_ data: Data?, forKey key: String) async {
        try? await disk.setExtendedData(data, forKey: key)
    }

    /// Empties the memory cache.
    public func clearMemory() async { await clear(.memory) }

    /// Empties the disk cache and reports what was removed and what could not be (a read-only
    /// folder). Files in the folder that the cache did not write are left alone.
    @discardableResult
    public func clearDisk() async -> DiskCache.CleanupReport { await disk.removeAll() }

    /// Removes expired disk entries and trims the disk cache to its size limit.
    @discardableResult
    public func removeExpiredData() async -> DiskCache.CleanupReport {
        await disk.removeExpiredData()
    }
}

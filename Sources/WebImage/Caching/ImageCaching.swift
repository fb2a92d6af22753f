import Foundation

/// The cache an image manager talks to (SDWebImage's `SDImageCache` protocol). `ImageCache` is
/// the default; any other store (a shared Redis, a CDN edge, an in-memory fake in tests) can
/// conform. Methods may be called from many tasks at once.
///
/// A cache provides five requirements: one query, one store, removal, presence and clearing.
/// The rest have defaults: extended data (none kept), the bytes alone (read through a query),
/// and the synchronous memory answers of `capabilities`.
public protocol ImageCaching: Sendable {
    /// The image stored under `key` as `query` asks: where to look (memory first), how to
    /// decode a disk hit, whether a disk hit may go into memory (only when the query's store
    /// type includes memory), whether a memory hit also reads the encoded data from disk, and
    /// whether to read the extended data in the same trip.
    func image(forKey key: String, query: ImageCacheQuery) async -> ImageCacheResult?
    /// Stores `image` and/or its encoded `data` under `key` in `destination`, with the entry's
    /// `extendedData` (the manager keeps HTTP validators there): a cache that can should make
    /// the two appear together. For the disk, missing data is encoded from the image. `context`
    /// is the storing call's (custom `ImageContextKey` values included), empty when no manager
    /// stores.
    /// - Throws: `ImageError.cacheWriteFailed` or `ImageError.encodingFailed` for the disk part.
    func store(_ image: Image?, data: Data?, extendedData: Data?, forKey key: String, to destination: ImageCacheType,
               context: ImageContext) async throws
    /// Removes the entry for `key` from `scope`.
    func removeImage(forKey key: String, from scope: ImageCacheType) async
    /// Where an entry for `key` exists, within `scope`.
    func containsImage(forKey key: String, in scope: ImageCacheType) async -> ImageCacheType
    /// Removes every entry in `scope`.
    func clear(_ scope: ImageCacheType) async

    /// Small metadata kept beside the entry for `key` (SDWebImage's extended data); the
    /// manager keeps HTTP validators there for `.refreshCached`. Default: none.
    func extendedData(forKey key: String) async -> Data?
    /// Stores (or with nil removes) the metadata for `key`; ignored when there is no entry.
    /// Default: nothing is kept.
    func setExtendedData(_ data: Data?, forKey key: String) async
    /// The encoded bytes stored on disk under `key`, not decoded (`ImageManager.data(for:)`).
    /// The default reads them through a disk query, which decodes them too: a cache that can
    /// read bytes alone should implement it.
    func data(forKey key: String) async -> Data?

    /// What this cache can answer without suspending (see `ImageCacheCapabilities`); none by
    /// default. The manager reads this, never the cache's type: a plug-in that declares the
    /// same gets the same path as `ImageCache`.
    var capabilities: ImageCacheCapabilities { get }
    /// With `.synchronousMemory`: the image in memory under `key`, without suspending and
    /// without touching the disk (SDWebImage's `imageFromMemoryCacheForKey:`); nil when it is
    /// not there. Default: nil.
    func cachedImage(forKey key: String) -> Image?
    /// With `.synchronousMemory`: puts `image` into memory under `key` at once, as a store to
    /// `.memory` would; false when the cache keeps nothing in memory. The manager calls it
    /// before it resumes a load's callers, so that a call made as soon as one returns finds the
    /// image. Default: false (the manager then stores through `store`).
    func storeInMemoryNow(_ image: Image, forKey key: String) -> Bool
    /// With `.synchronousMemory`: as `storeInMemoryNow(_:forKey:)`, for at most `lifetime` (the
    /// freshness left of the image's HTTP response; zero: not at all). Default: the lifetime is
    /// not kept (a zero one stores nothing).
    func storeInMemoryNow(_ image: Image, forKey key: String, lifetime: Duration?) -> Bool
}

/// What an `ImageCaching` can do without suspending.
public struct ImageCacheCapabilities: OptionSet, Sendable {
    /// The capabilities' bits.
    public let rawValue: Int

    /// Capabilities from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `cachedImage(forKey:)` and `storeInMemoryNow(_:forKey:)` answer from memory without
    /// suspending: the manager answers a memory hit in the caller's own task, with no hop.
    public static let synchronousMemory = ImageCacheCapabilities(rawValue: 1 << 0)
}

extension ImageCaching {
    /// The image stored under `key`, looking in `scope` (memory first), decoded with `options`
    /// on a disk hit. With `includingData` a memory hit also reads the encoded data from disk.
    /// A disk hit goes into memory unless `options` may reduce the image (see
    /// `ImageCacheQuery.storeType`).
    public func image(forKey key: String, from scope: ImageCacheType = .all, options: ImageDecodingOptions = .init(),
                      includingData: Bool = false) async -> ImageCacheResult? {
        await image(forKey: key, query: ImageCacheQuery(scope: scope, options: options, includingData: includingData))
    }

    /// Stores `image` and/or its encoded `data` under `key` in `destination`, with no extended
    /// data unless given, and no context.
    /// - Throws: as `store(_:data:extendedData:forKey:to:context:)`.
    public func store(_ image: Image?, data: Data?, extendedData: Data? = nil, forKey key: String,
                      to destination: ImageCacheType = .all) async throws {
        try await store(image, data: data, extendedData: extendedData, forKey: key, to: destination, context: ImageContext())
    }

    /// Caches without metadata support keep none.
    public func extendedData(forKey key: String) async -> Data? { nil }

    /// Caches without metadata support keep none.
    public func setExtendedData(_ data: Data?, forKey key: String) async {}

    /// Reads the bytes through a disk lookup that decodes them as well.
    public func data(forKey key: String) async -> Data? {
        await image(forKey: key, query: ImageCacheQuery(scope: .disk, includingData: true, storeType: .disk))?.data
    }

    /// None: every answer may suspend.
    public var capabilities: ImageCacheCapabilities { [] }

    /// Not answered without suspending.
    public func cachedImage(forKey key: String) -> Image? { nil }

    /// Not stored without suspending.
    public func storeInMemoryNow(_ image: Image, forKey key: String) -> Bool { false }

    /// The lifetime is not kept; a zero one stores nothing.
    public func storeInMemoryNow(_ image: Image, forKey key: String, lifetime: Duration?) -> Bool {
        if let lifetime, lifetime <= .zero { return false }
        return storeInMemoryNow(image, forKey: key)
    }
}

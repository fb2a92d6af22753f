import Foundation

/// The cache an image manager talks to (SDWebImage's `SDImageCache` protocol). `ImageCache` is
/// the default; any other store (a shared Redis, a CDN edge, an in-memory fake in tests) can
/// conform. Methods may be called from many tasks at once.
public protocol ImageCaching: Sendable {
    /// The image stored under `key`, looking in `scope` (memory first), decoded with `options`
    /// on a disk hit. With `includingData` a memory hit also reads the encoded data from disk.
    func image(forKey key: String, from scope: ImageCacheType, options: ImageDecodingOptions, includingData: Bool) async
        -> ImageCacheResult?
    /// The image stored under `key` as `query` asks: where to look, how to decode, whether a
    /// disk hit may go into memory (only when the query's store type includes memory), and
    /// whether to read the extended data in the same trip. The default forwards to
    /// `image(forKey:from:options:includingData:)` and `extendedData(forKey:)`.
    func image(forKey key: String, query: ImageCacheQuery) async -> ImageCacheResult?
    /// Stores `image` and/or its encoded `data` under `key` in `destination`. For the disk,
    /// missing data is encoded from the image.
    /// - Throws: `ImageError.cacheWriteFailed` or `ImageError.encodingFailed` for the disk part.
    func store(_ image: Image?, data: Data?, forKey key: String, to destination: ImageCacheType) async throws
    /// The same, with the entry's extended data written with it: a cache that can should make
    /// the two appear together (the manager stores HTTP validators this way). The default
    /// stores, then sets the extended data when there is some.
    func store(_ image: Image?, data: Data?, extendedData: Data?, forKey key: String, to destination: ImageCacheType) async throws
    /// Removes the entry for `key` from `scope`.
    func removeImage(forKey key: String, from scope: ImageCacheType) async
    /// Where an entry for `key` exists, within `scope`.
    func containsImage(forKey key: String, in scope: ImageCacheType) async -> ImageCacheType
    /// Removes every entry in `scope`.
    func clear(_ scope: ImageCacheType) async
    /// Small metadata kept beside the entry for `key` (SDWebImage's extended data); the
    /// manager keeps HTTP validators there for `.refreshCached`.
    func extendedData(forKey key: String) async -> Data?
    /// Stores (or with nil removes) the metadata for `key`; ignored when there is no entry.
    func setExtendedData(_ data: Data?, forKey key: String) async
    /// The encoded bytes stored on disk under `key`, not decoded (`ImageManager.data(for:)`).
    /// The default reads them through `image(forKey:from:options:includingData:)`, which decodes
    /// them too: a cache that can read bytes alone should implement it.
    func data(forKey key: String) async -> Data?
}

extension ImageCaching {
    /// Caches that do not copy disk hits into memory (or always do) ignore the store type; the
    /// extended data is read separately.
    public func image(forKey key: String, query: ImageCacheQuery) async -> ImageCacheResult? {
        guard var hit = await image(forKey: key, from: query.scope, options: query.options, includingData: query.includingData) else {
            return nil
        }
        if query.includingExtendedData { hit.extendedData = await extendedData(forKey: key) }
        return hit
    }

    /// Stores, then attaches the extended data (when there is some and the disk was written).
    public func store(_ image: Image?, data: Data?, extendedData: Data?, forKey key: String, to destination: ImageCacheType) async throws {
        try await store(image, data: data, forKey: key, to: destination)
        if let extendedData, destination.includesDisk { await setExtendedData(extendedData, forKey: key) }
    }

    /// Caches without metadata support keep none.
    public func extendedData(forKey key: String) async -> Data? { nil }

    /// Reads the bytes through a disk lookup that decodes them as well.
    public func data(forKey key: String) async -> Data? {
        await image(forKey: key, from: .disk, options: ImageDecodingOptions(), includingData: true)?.data
    }
    /// Caches without metadata support keep none.
    public func setExtendedData(_ data: Data?, forKey key: String) async {}
}

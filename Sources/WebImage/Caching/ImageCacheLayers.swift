import Foundation

/// The memory layer an `ImageCache` is built from (SDWebImage's `SDMemoryCacheProtocol`):
/// decoded images by key, answered without suspending. `MemoryCache` is the library's; a
/// layer of one's own (a different eviction policy, a size shared with other caches) drops in
/// through `ImageCache(memory:disk:config:coders:)`.
///
/// Every call is made on the caller's thread, memory hits on the hot path of every image
/// call: keep them short and never blocking.
public protocol ImageMemoryCaching: Sendable {
    /// The image under `key`, or nil.
    func image(forKey key: String) -> Image?
    /// Whether an image is under `key`.
    func contains(_ key: String) -> Bool
    /// Keeps `image` under `key`, costing `cost` (nil: its pixel bytes), for at most `lifetime`
    /// (nil: the layer's own rule).
    func setImage(_ image: Image, forKey key: String, cost: Int?, lifetime: Duration?)
    /// Drops the image under `key`.
    func removeImage(forKey key: String)
    /// Drops every image.
    func removeAll()
    /// The process is short of memory: drop what can be made again. The default drops
    /// everything.
    func handleMemoryPressure()
}

extension ImageMemoryCaching {
    /// Drops everything.
    public func handleMemoryPressure() { removeAll() }

    /// Keeps `image` under `key` at its pixel cost, by the layer's own lifetime rule.
    public func setImage(_ image: Image, forKey key: String) { setImage(image, forKey: key, cost: nil, lifetime: nil) }
}

extension MemoryCache: ImageMemoryCaching {}

/// The disk layer an `ImageCache` is built from (SDWebImage's `SDDiskCacheProtocol`): encoded
/// bytes by key, with a small extended-data blob beside each entry. `DiskCache` is the
/// library's (files in a folder, on a thread of its own); a layer over one's own storage (a
/// database, an object store) drops in through `ImageCache(memory:disk:config:coders:)`.
///
/// The asynchronous calls may block their own executor, never the cooperative pool's threads
/// for long: run blocking I/O on an executor of the layer's own. The two synchronous lookups
/// (`containsData(forKey:)`, `cachedData(forKey:)`) run on their caller's thread, as
/// `ImageCache.diskImageDataExists(forKey:)` documents.
public protocol ImageDiskCaching: Sendable {
    /// The bytes under `key`, or nil.
    func data(forKey key: String) async -> Data?
    /// The extended data beside `key`'s entry (the HTTP metadata the manager keeps), or nil.
    func extendedData(forKey key: String) async -> Data?
    /// The data and the extended data of `key`'s entry, as asked, in one call where the layer
    /// can; nil when there is no entry. The default asks `data(forKey:)` and
    /// `extendedData(forKey:)`.
    func entry(forKey key: String, includingData: Bool, includingExtendedData: Bool) async -> (data: Data?, extendedData: Data?)?
    /// Stores `data` under `key` with `extendedData` (nil: none) in one step: after a crash the
    /// entry has both of one store, never a mix.
    /// - Throws: `ImageError` when the storage cannot be written (full, read-only).
    func store(_ data: Data, extendedData: Data?, forKey key: String) async throws
    /// Replaces the extended data of `key`'s entry (nil removes it).
    /// - Throws: `ImageError` when the storage cannot be written.
    func setExtendedData(_ data: Data?, forKey key: String) async throws
    /// Removes `key`'s entry.
    func removeData(forKey key: String) async
    /// Whether an entry is under `key`.
    func contains(_ key: String) async -> Bool
    /// Removes every entry; says what was removed and what could not be.
    @discardableResult
    func removeAll() async -> DiskCache.CleanupReport
    /// Removes the entries the layer's rules say are expired (a layer without expiry returns an
    /// empty report).
    @discardableResult
    func removeExpiredData() async -> DiskCache.CleanupReport
    /// How many entries the layer holds.
    func count() async -> Int
    /// The bytes the layer's entries take.
    func totalSize() async -> Int
    /// Where the layer keeps its entries, for messages (a folder's path, a database's name).
    var location: String { get }
    /// Whether an entry is under `key`, answered on the caller's thread (it may block it for
    /// one lookup).
    func containsData(forKey key: String) -> Bool
    /// The bytes under `key`, read on the caller's thread (it may block it for one read).
    func cachedData(forKey key: String) -> Data?
}

extension ImageDiskCaching {
    /// Stores `data` under `key` without extended data.
    /// - Throws: as `store(_:extendedData:forKey:)`.
    public func store(_ data: Data, forKey key: String) async throws { try await store(data, extendedData: nil, forKey: key) }

    /// The entry through `data(forKey:)` and `extendedData(forKey:)`.
    public func entry(forKey key: String, includingData: Bool, includingExtendedData: Bool) async -> (data: Data?, extendedData: Data?)? {
        let data = includingData ? await self.data(forKey: key) : nil
        if includingData, data == nil { return nil }
        let extended = includingExtendedData ? await extendedData(forKey: key) : nil
        if !includingData, !includingExtendedData { return await contains(key) ? (nil, nil) : nil }
        if !includingData, extended == nil, !(await contains(key)) { return nil }
        return (data, extended)
    }
}

extension DiskCache: ImageDiskCaching {
    /// The cache's folder.
    public nonisolated var location: String { directory.path }
}

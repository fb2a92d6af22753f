import Foundation
import WebImage

/// An `ImageCaching` with a fleet's shared tier behind this machine's cache: memory, then disk,
/// then the `SharedCacheTier`, then the origin; stores write through to the tier.
///
/// ```swift
/// let tier = try SharedCacheTier(.init(servers: SharedCacheConfiguration.servers(from: "memcached://h1:11211,h2:11211")))
/// let manager = ImageManager(cache: TieredImageCache(base: .shared, tier: tier))
/// ```
///
/// A tier hit is decoded here, copied into the local cache (memory too when the query's store
/// type allows) and reported as a disk hit. A miss takes the key's lease (fleet-wide single
/// flight): the first machine fetches from the origin and its store ends the lease; the others
/// wait for its entry, polling with backoff for at most `leaseWait`, then fetch themselves.
/// `clear` empties this machine's cache only: the tier is the fleet's.
public final class TieredImageCache: ImageCaching {
    /// This machine's cache.
    public let base: ImageCache
    /// The fleet's tier.
    public let tier: SharedCacheTier
    private let coders: ImageCoders

    /// `base` in front of `tier`; tier hits are decoded with `coders` (in its isolation, if it has one).
    public init(base: ImageCache, tier: SharedCacheTier, coders: ImageCoders = .shared) {
        self.base = base
        self.tier = tier
        self.coders = coders
    }

    /// This machine's cache first; within a disk scope, then the tier (taking the key's lease,
    /// or waiting for another machine's entry, on a miss).
    public func image(forKey key: String, query: ImageCacheQuery) async -> ImageCacheResult? {
        if let hit = await base.image(forKey: key, query: query) { return hit }
        guard query.scope.includesDisk, !key.isEmpty, !Task.isCancelled else { return nil }
        if let hit = await tierImage(forKey: key, query: query, entry: await tier.entry(forKey: key)) { return hit }
        // Missing everywhere: the first machine to ask fetches it; the others wait for its entry.
        guard !(await tier.takeLease(forKey: key)) else {
            tier.count(.miss)
            return nil
        }
        let hit = await tierImage(forKey: key, query: query, entry: await tier.waitForEntry(forKey: key))
        if hit == nil { tier.count(.miss) }
        return hit
    }

    /// A tier entry as a hit: decoded, copied into this machine's cache; a corrupt one is deleted.
    private func tierImage(forKey key: String, query: ImageCacheQuery, entry: SharedCacheEntry?) async -> ImageCacheResult? {
        guard let entry else { return nil }
        let image: Image
        do { image = try await coders.decode(entry.data, options: query.options, context: ImageContext()) } catch {
            // Every caller left during an isolated decode: the entry is not to blame.
            if !(error is CancellationError) { await tier.discardCorrupt(key) }
            return nil
        }
        tier.count(.hit)
        let local: ImageCacheType = query.storeType.includesMemory ? .all : .disk
        try? await base.store(image, data: entry.data, extendedData: entry.validators, forKey: key, to: local)
        return ImageCacheResult(image: image, data: entry.data, cacheType: .disk, extendedData: entry.validators)
    }

    /// Stores in this machine's cache, then (for the disk) the same bytes in the tier.
    public func store(_ image: Image?, data: Data?, extendedData: Data?, forKey key: String, to destination: ImageCacheType,
                      context: ImageContext) async throws {
        try await base.store(image, data: data, extendedData: extendedData, forKey: key, to: destination, context: context)
        guard destination.includesDisk, !key.isEmpty else { return }
        // The bytes the disk got (encoded from the image when no data was given).
        var bytes = data
        if bytes == nil { bytes = await base.data(forKey: key) }
        guard let bytes else { return }
        await tier.store(bytes, validators: extendedData, forKey: key)
    }

    /// Removes the entry here and, within a disk scope, from the tier.
    public func removeImage(forKey key: String, from scope: ImageCacheType) async {
        await base.removeImage(forKey: key, from: scope)
        if scope.includesDisk { await tier.remove(forKey: key) }
    }

    /// Where this machine's cache holds the entry (the tier is not asked).
    public func containsImage(forKey key: String, in scope: ImageCacheType) async -> ImageCacheType {
        await base.containsImage(forKey: key, in: scope)
    }

    /// Empties this machine's cache in `scope`; the fleet's tier keeps its entries.
    public func clear(_ scope: ImageCacheType) async { await base.clear(scope) }

    /// This machine's extended data for `key`.
    public func extendedData(forKey key: String) async -> Data? { await base.extendedData(forKey: key) }

    /// Sets this machine's extended data for `key`.
    public func setExtendedData(_ data: Data?, forKey key: String) async { await base.setExtendedData(data, forKey: key) }

    /// The encoded bytes from this machine's disk, else from the tier.
    public func data(forKey key: String) async -> Data? {
        if let data = await base.data(forKey: key) { return data }
        return await tier.data(forKey: key)
    }

    /// This machine's memory answers without suspending, as `ImageCache`'s does.
    public var capabilities: ImageCacheCapabilities { base.capabilities }

    /// The image in this machine's memory (the tier is never asked).
    public func cachedImage(forKey key: String) -> Image? { base.cachedImage(forKey: key) }

    /// Puts `image` into this machine's memory at once.
    public func storeInMemoryNow(_ image: Image, forKey key: String) -> Bool { base.storeInMemoryNow(image, forKey: key) }
    /// The base cache's memory, for at most `lifetime`.
    public func storeInMemoryNow(_ image: Image, forKey key: String, lifetime: Duration?) -> Bool {
        base.storeInMemoryNow(image, forKey: key, lifetime: lifetime)
    }
}

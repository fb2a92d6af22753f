import Foundation

/// How an `ImageCache` behaves (SDWebImage's `SDImageCacheConfig`). Every default is the one in
/// DESIGN.md's table.
public struct ImageCacheConfig: Sendable {
    /// Keep decoded images in memory (default true).
    public var shouldCacheImagesInMemory: Bool
    /// Find evicted images again while callers still hold them (default true).
    public var shouldUseWeakMemoryCache: Bool
    /// Memory cost limit in bytes of decoded pixels (default 15 % of the memory the process may use).
    public var maxMemoryCost: Int
    /// Memory entry count limit; 0 for none (default).
    public var maxMemoryCount: Int
    /// Disk entries older than this are removed by cleanup (default 7 days; nil keeps them).
    public var maxDiskAge: Duration?
    /// Disk size limit in bytes; 0 for none (default). Over it, cleanup trims to half.
    public var maxDiskSize: Int
    /// The date that ages disk entries (default: modification date).
    public var diskCacheExpireType: DiskCache.ExpireType
    /// How often cleanup runs while the cache is in use (default one hour).
    public var cleanupInterval: Duration?
    /// Read-only directories searched after a disk miss.
    public var additionalCacheDirectories: [URL]
    /// Watch the cgroup's `memory.events` and `/proc/pressure/memory` and empty the memory cache
    /// (keeping the weak table) under pressure (default false).
    public var watchesMemoryPressure: Bool

    /// A configuration; every argument has the documented default.
    public init(shouldCacheImagesInMemory: Bool = true, shouldUseWeakMemoryCache: Bool = true,
                maxMemoryCost: Int = MemoryCache.Configuration.defaultCostLimit, maxMemoryCount: Int = 0,
                maxDiskAge: Duration? = .seconds(7 * 24 * 3600), maxDiskSize: Int = 0,
                diskCacheExpireType: DiskCache.ExpireType = .modificationDate, cleanupInterval: Duration? = .seconds(3600),
                additionalCacheDirectories: [URL] = [], watchesMemoryPressure: Bool = false) {
        self.shouldCacheImagesInMemory = shouldCacheImagesInMemory
        self.shouldUseWeakMemoryCache = shouldUseWeakMemoryCache
        self.maxMemoryCost = maxMemoryCost
        self.maxMemoryCount = maxMemoryCount
        self.maxDiskAge = maxDiskAge
        self.maxDiskSize = maxDiskSize
        self.diskCacheExpireType = diskCacheExpireType
        self.cleanupInterval = cleanupInterval
        self.additionalCacheDirectories = additionalCacheDirectories
        self.watchesMemoryPressure = watchesMemoryPressure
    }
}

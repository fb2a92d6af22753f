import Foundation

/// Where an image was found, or where to store or look for it.
public enum ImageCacheType: Sendable, Hashable {
    /// Nowhere (not cached, or do not cache).
    case none
    /// The memory cache.
    case memory
    /// The disk cache.
    case disk
    /// Both.
    case all

    /// Whether this includes the memory cache.
    public var includesMemory: Bool { self == .memory || self == .all }
    /// Whether this includes the disk cache.
    public var includesDisk: Bool { self == .disk || self == .all }

    init(memory: Bool, disk: Bool) {
        switch (memory, disk) {
        case (true, true): self = .all
        case (true, false): self = .memory
        case (false, true): self = .disk
        case (false, false): self = .none
        }
    }
}

/// An image found in a cache.
public struct ImageCacheResult: Sendable {
    /// The decoded image.
    public var image: Image
    /// The encoded data, when it was read from disk or asked for.
    public var data: Data?
    /// Where it was found: `.memory` or `.disk`.
    public var cacheType: ImageCacheType
    /// The entry's extended data (the HTTP validators the manager keeps), when the query asked
    /// for it (``ImageCacheQuery/includingExtendedData``).
    public var extendedData: Data?

    /// A cache result.
    public init(image: Image, data: Data?, cacheType: ImageCacheType, extendedData: Data? = nil) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.extendedData = extendedData
    }
}

/// What a cache query asks for, as one value (SDWebImage's query options and context).
public struct ImageCacheQuery: Sendable {
    /// Where to look (memory first).
    public var scope: ImageCacheType
    /// How a disk hit is decoded.
    public var options: ImageDecodingOptions
    /// Whether a memory hit also reads the encoded data from disk.
    public var includingData: Bool
    /// Where the calling load stores: a disk hit is copied into memory only when this includes
    /// memory (SDWebImage's rule: a load whose store type is `.disk` leaves memory alone). By
    /// default memory and disk, or the disk alone when `options` may reduce the image (a
    /// thumbnail decode is not the image its key names).
    public var storeType: ImageCacheType
    /// Whether to read the entry's extended data too, in the same trip to the disk (the
    /// validators that `.refreshCached` sends).
    public var includingExtendedData: Bool

    /// The call's context, merged over the manager's defaults (custom `ImageContextKey` values
    /// included), for a cache of the program's own; empty when no manager made the query.
    public var context = ImageContext()

    /// Whether concurrent queries of one key may share one disk read and decode (the default).
    /// The manager turns it off for its loads: its work already shares every caller of a key,
    /// so the read runs in the work's own task instead of a shared one.
    public var sharesConcurrentReads = true

    /// A query; every argument has the documented default (a nil `storeType` is the default
    /// described on `storeType`).
    public init(scope: ImageCacheType = .all, options: ImageDecodingOptions = .init(), includingData: Bool = false,
                storeType: ImageCacheType? = nil, includingExtendedData: Bool = false) {
        self.scope = scope
        self.options = options
        self.includingData = includingData
        self.storeType = storeType ?? (options.mayReduceImage ? .disk : .all)
        self.includingExtendedData = includingExtendedData
    }
}

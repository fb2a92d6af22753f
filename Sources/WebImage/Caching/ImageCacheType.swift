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

    /// A cache result.
    public init(image: Image, data: Data?, cacheType: ImageCacheType) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
    }
}

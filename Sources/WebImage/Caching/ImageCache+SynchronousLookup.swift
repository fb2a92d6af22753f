import Foundation

// The disk layer asked without suspending, under SDWebImage's names. Each blocks the caller's
// thread for the file-system work it does: for a thread of the caller's own or synchronous code
// outside Swift concurrency, never the cooperative pool (its `async` counterparts are for that).
extension ImageCache {
    /// Whether the disk layer holds an entry for `key` (SDWebImage's
    /// `diskImageDataExistsWithKey:`), without suspending: blocks the caller's thread for a
    /// file-system lookup. See ``DiskCache/containsData(forKey:)``.
    public func diskImageDataExists(forKey key: String) -> Bool {
        disk.containsData(forKey: key)
    }

    /// The disk layer's bytes for `key` (SDWebImage's `diskImageDataForKey:`), without
    /// suspending: blocks the caller's thread for one file read. See
    /// ``DiskCache/cachedData(forKey:)``.
    public func diskImageData(forKey key: String) -> Data? {
        disk.cachedData(forKey: key)
    }

    /// The disk layer's entry for `key` decoded with `options` (SDWebImage's
    /// `imageFromDiskCacheForKey:`), without suspending: blocks the caller's thread for one file
    /// read and the decode, which runs in this process with the cache's ``coders`` (never in
    /// their isolation: with an isolated registry, await ``image(forKey:query:)`` instead).
    /// The image is not put into memory. An entry that does not decode is left on disk for the
    /// asynchronous query to judge.
    /// - Throws: the decoder's error (`ImageError`) for an entry that does not decode.
    /// - Returns: nil when there is no entry.
    public func imageFromDiskCache(forKey key: String, options: ImageDecodingOptions = .init()) throws -> Image? {
        guard let data = disk.cachedData(forKey: key) else { return nil }
        return try coders.decode(data, options: options)
    }
}

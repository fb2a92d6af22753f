/// Concurrent disk queries of the same key (and decoding options) share one read and one decode.
/// The first caller does the work in its own task; later callers wait for its result.
actor DiskQueryCoalescer {
    private struct Key: Hashable {
        var key: String
        var options: ImageDecodingOptions
        var extended: Bool
    }

    private var waiters: [Key: [CheckedContinuation<ImageCacheResult?, Never>]] = [:]

    /// The result of `work` for this key and options, run once however many callers ask at once.
    func result(forKey key: String, options: ImageDecodingOptions, extended: Bool = false,
                work: @Sendable () async -> ImageCacheResult?) async -> ImageCacheResult? {
        let id = Key(key: key, options: options, extended: extended)
        if waiters[id] != nil {
            return await withCheckedContinuation { waiters[id]?.append($0) }
        }
        waiters[id] = []
        let result = await work()
        for waiter in waiters.removeValue(forKey: id) ?? [] { waiter.resume(returning: result) }
        return result
    }
}

/// Concurrent disk queries of the same key (and decoding options) share one read and one decode.
actor DiskQueryCoalescer {
    private struct Key: Hashable {
        var key: String
        var options: ImageDecodingOptions
    }

    private var inFlight: [Key: Task<ImageCacheResult?, Never>] = [:]

    /// The result of `work` for this key and options, started once however many callers ask.
    func result(forKey key: String, options: ImageDecodingOptions,
                work: @escaping @Sendable () async -> ImageCacheResult?) async -> ImageCacheResult? {
        let id = Key(key: key, options: options)
        if let task = inFlight[id] { return await task.value }
        let task = Task.detached(operation: work)
        inFlight[id] = task
        let result = await task.value
        inFlight[id] = nil
        return result
    }
}

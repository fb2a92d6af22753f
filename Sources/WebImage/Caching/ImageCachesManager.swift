import Foundation

/// Several caches as one (SDWebImage's `SDImageCachesManager`): a manager given this cache
/// queries, stores, removes, asks and clears across `caches` as each operation's policy says.
///
/// ```swift
/// let caches = ImageCachesManager([ImageCache.shared, sharedTier])
/// caches.queryPolicy = .serial          // the last cache first, then the one before
/// caches.storePolicy = .concurrent      // every cache at once
/// let manager = ImageManager(cache: caches)
/// ```
///
/// Priority is array order, as SDWebImage's: the last cache is the highest, asked first by a
/// serial query and the one a `.highestOnly` operation uses. The defaults are SDWebImage's:
/// query and contains serial, store highest only, remove and clear concurrent.
public final class ImageCachesManager: ImageCaching {
    /// How one operation runs across the caches.
    public enum OperationPolicy: Sendable {
        /// One cache after another, highest priority (last) first; a query or a presence check
        /// stops at the first cache that has the entry.
        case serial
        /// Every cache at once; a query or a presence check answers with the first cache that
        /// has the entry (the highest-priority one among those that answer together).
        case concurrent
        /// The highest-priority (last) cache alone.
        case highestOnly
        /// The lowest-priority (first) cache alone.
        case lowestOnly
    }

    /// The caches, lowest priority first.
    public let caches: [any ImageCaching]
    /// How queries (and the extended data and bytes read with them) run. Default `.serial`.
    public let queryPolicy: OperationPolicy
    /// How stores (and extended-data writes) run. Default `.highestOnly`.
    public let storePolicy: OperationPolicy
    /// How removals run. Default `.concurrent`.
    public let removePolicy: OperationPolicy
    /// How presence checks run. Default `.serial`.
    public let containsPolicy: OperationPolicy
    /// How clears run. Default `.concurrent`.
    public let clearPolicy: OperationPolicy

    /// A manager over `caches` (lowest priority first) with these policies.
    public init(_ caches: [any ImageCaching], queryPolicy: OperationPolicy = .serial, storePolicy: OperationPolicy = .highestOnly,
                removePolicy: OperationPolicy = .concurrent, containsPolicy: OperationPolicy = .serial,
                clearPolicy: OperationPolicy = .concurrent) {
        self.caches = caches
        self.queryPolicy = queryPolicy
        self.storePolicy = storePolicy
        self.removePolicy = removePolicy
        self.containsPolicy = containsPolicy
        self.clearPolicy = clearPolicy
    }

    /// The caches `policy` asks, in the order a serial operation asks them.
    private func targets(_ policy: OperationPolicy) -> [any ImageCaching] {
        switch policy {
        case .serial, .concurrent: caches.reversed()
        case .highestOnly: caches.last.map { [$0] } ?? []
        case .lowestOnly: caches.first.map { [$0] } ?? []
        }
    }

    /// The first answer of `ask` across the caches of `policy`: in order, or all at once.
    private func firstAnswer<Answer: Sendable>(_ policy: OperationPolicy,
                                               _ ask: @escaping @Sendable (any ImageCaching) async -> Answer?) async -> Answer? {
        let targets = targets(policy)
        guard policy == .concurrent, targets.count > 1 else {
            for cache in targets { if let answer = await ask(cache) { return answer } }
            return nil
        }
        return await withTaskGroup(of: Answer?.self) { group in
            for cache in targets { group.addTask { await ask(cache) } }
            for await answer in group where answer != nil {
                group.cancelAll()
                return answer
            }
            return nil
        }
    }

    /// Runs `work` on every cache of `policy`: in order, or all at once.
    private func each(_ policy: OperationPolicy, _ work: @escaping @Sendable (any ImageCaching) async throws -> Void) async throws {
        let targets = targets(policy)
        guard policy == .concurrent, targets.count > 1 else {
            for cache in targets { try await work(cache) }
            return
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for cache in targets { group.addTask { try await work(cache) } }
            try await group.waitForAll()
        }
    }

    // MARK: - ImageCaching

    /// The first cache's answer by `queryPolicy`.
    public func image(forKey key: String, query: ImageCacheQuery) async -> ImageCacheResult? {
        await firstAnswer(queryPolicy) { await $0.image(forKey: key, query: query) }
    }

    /// Stores in the caches of `storePolicy`; the first failure is thrown (after every cache of
    /// a concurrent store was tried).
    /// - Throws: a cache's `ImageError.cacheWriteFailed` or `ImageError.encodingFailed`.
    public func store(_ image: Image?, data: Data?, extendedData: Data?, forKey key: String, to destination: ImageCacheType,
                      context: ImageContext) async throws {
        try await each(storePolicy) { try await $0.store(image, data: data, extendedData: extendedData, forKey: key, to: destination, context: context) }
    }

    /// Removes from the caches of `removePolicy`.
    public func removeImage(forKey key: String, from scope: ImageCacheType) async {
        try? await each(removePolicy) { await $0.removeImage(forKey: key, from: scope) }
    }

    /// Where the first cache by `containsPolicy` that has the entry has it.
    public func containsImage(forKey key: String, in scope: ImageCacheType) async -> ImageCacheType {
        await firstAnswer(containsPolicy) { cache -> ImageCacheType? in
            let found = await cache.containsImage(forKey: key, in: scope)
            return found == .none ? nil : found
        } ?? .none
    }

    /// Clears the caches of `clearPolicy`.
    public func clear(_ scope: ImageCacheType) async {
        try? await each(clearPolicy) { await $0.clear(scope) }
    }

    /// The extended data of the first cache by `queryPolicy` that has some.
    public func extendedData(forKey key: String) async -> Data? {
        await firstAnswer(queryPolicy) { await $0.extendedData(forKey: key) }
    }

    /// Sets the extended data in the caches of `storePolicy`.
    public func setExtendedData(_ data: Data?, forKey key: String) async {
        try? await each(storePolicy) { await $0.setExtendedData(data, forKey: key) }
    }

    /// The bytes of the first cache by `queryPolicy` that has them.
    public func data(forKey key: String) async -> Data? {
        await firstAnswer(queryPolicy) { await $0.data(forKey: key) }
    }

    /// Synchronous memory when every cache a query asks has it.
    public var capabilities: ImageCacheCapabilities {
        let asked = targets(queryPolicy)
        return !asked.isEmpty && asked.allSatisfy({ $0.capabilities.contains(.synchronousMemory) }) ? .synchronousMemory : []
    }

    /// The first memory hit among the caches a query asks, in the serial order.
    public func cachedImage(forKey key: String) -> Image? {
        for cache in targets(queryPolicy) { if let image = cache.cachedImage(forKey: key) { return image } }
        return nil
    }

    /// Puts `image` into the memory of the caches a store reaches; true when one kept it.
    public func storeInMemoryNow(_ image: Image, forKey key: String) -> Bool {
        storeInMemoryNow(image, forKey: key, lifetime: nil)
    }

    /// As `storeInMemoryNow(_:forKey:)`, for at most `lifetime`.
    public func storeInMemoryNow(_ image: Image, forKey key: String, lifetime: Duration?) -> Bool {
        var kept = false
        for cache in targets(storePolicy) where cache.storeInMemoryNow(image, forKey: key, lifetime: lifetime) { kept = true }
        return kept
    }
}

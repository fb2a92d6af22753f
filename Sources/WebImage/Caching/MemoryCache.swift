import CoreMetrics
import Synchronization

/// Decoded images in memory with least-recently-used eviction (SDWebImage's `SDMemoryCache`).
///
/// One synchronisation: the entries are under a lock, and every call (look-up, store,
/// eviction) takes it once, from any thread, without suspending. It was an actor whose state
/// was also under this lock, so that the manager's memory hit could skip the actor's hop; the
/// hop bought nothing the lock did not already give (see DocC "Architecture" for the
/// measurement). Lookups, inserts and evictions are O(1). With the weak cache on (the default),
/// an image evicted while a caller still holds it is found again and put back, as
/// SDWebImage's `shouldUseWeakMemoryCache` does.
public final class MemoryCache: Sendable {
    /// Limits and policies. Every default is the one in DESIGN.md.
    public struct Configuration: Sendable {
        /// Total cost (bytes of decoded pixels) kept; 15 % of the memory this process may use
        /// (cgroup v2 `memory.max` when set, else physical RAM) by default.
        public var costLimit: Int
        /// Maximum number of entries; 0 means no limit (the default).
        public var countLimit: Int
        /// An entry costing more than this fraction of `costLimit` is not kept (default 0.1).
        public var maxEntryFraction: Double
        /// How long an entry stays valid after it was stored; nil (the default) for ever.
        public var entryLifetime: Duration?
        /// Whether evicted images still held elsewhere are found again (default true).
        public var usesWeakCache: Bool
        /// How many times a key's image must be stored before it is kept (default 1: every
        /// store is kept). With 2, an image is kept from the second time its key is decoded
        /// (nginx's `proxy_cache_min_uses`): images made once and never asked for again, as an
        /// image proxy's many one-off sizes are, leave the cache's room to those asked for
        /// twice. The last 4,096 keys not yet kept are counted; a key replacing an entry it
        /// holds, or found again in the weak table, is kept at once.
        public var minimumUses: Int

        /// 15 % of the memory this process may use (cgroup v2 `memory.max`, else physical RAM).
        public static var defaultCostLimit: Int { ProcessMemory.defaultCacheCostLimit }

        /// A configuration; every argument has the documented default.
        public init(costLimit: Int = Configuration.defaultCostLimit, countLimit: Int = 0, maxEntryFraction: Double = 0.1,
                    entryLifetime: Duration? = nil, usesWeakCache: Bool = true, minimumUses: Int = 1) {
            self.costLimit = costLimit
            self.countLimit = countLimit
            self.maxEntryFraction = maxEntryFraction
            self.entryLifetime = entryLifetime
            self.usesWeakCache = usesWeakCache
            self.minimumUses = minimumUses
        }
    }

    private struct Entry {
        var image: Image
        var cost: Int
        var expires: ContinuousClock.Instant?
    }

    private struct WeakEntry {
        weak var content: ImageContent?
        var scale: Double
    }

    /// Everything the cache holds; only touched under `state`'s lock.
    private struct State {
        var configuration: Configuration
        var totalCost = 0
        var entries = LRUList<String, Entry>()
        var weakEntries: [String: WeakEntry] = [:]
        /// The key of the last look-up that found nothing, until an entry is added: the callers
        /// of a URL that is being loaded each ask memory first, and each one after the first
        /// then compares one string instead of hashing it (in the strong table, and in the weak
        /// table when it holds entries).
        var lastMiss: String?
        /// The stores counted towards `minimumUses`.
        var admission: MemoryCacheAdmission

        init(configuration: Configuration) {
            self.configuration = configuration
            admission = MemoryCacheAdmission(minimumUses: configuration.minimumUses)
        }

        mutating func image(forKey key: String) -> Image? {
            if let lastMiss, lastMiss == key { return nil }
            if let node = entries.touchNode(key) {
                if let expires = node.value.expires, expires <= .now {
                    // An expired entry has no weak one (a strong entry supersedes it): a miss.
                    remove(key)
                    lastMiss = key
                    return nil
                }
                return node.value.image
            }
            guard configuration.usesWeakCache, let weak = weakEntries[key] else {
                lastMiss = key
                return nil
            }
            guard let content = weak.content else {
                weakEntries.removeValue(forKey: key)
                lastMiss = key
                return nil
            }
            let image = Image(content: content, scale: weak.scale)
            insert(image, forKey: key, cost: image.memoryCost)
            return image
        }

        func contains(_ key: String) -> Bool {
            if entries.peek(key) != nil { return true }
            return configuration.usesWeakCache && weakEntries[key]?.content != nil
        }

        /// A store: kept when the key is held (strongly or weakly) or has been stored
        /// `minimumUses` times.
        mutating func store(_ image: Image, forKey key: String, cost: Int, lifetime: Duration?) {
            if configuration.minimumUses > 1, entries.peek(key) == nil, weakEntries[key] == nil, !admission.admits(key) { return }
            insert(image, forKey: key, cost: cost, lifetime: lifetime)
        }

        mutating func insert(_ image: Image, forKey key: String, cost: Int, lifetime: Duration? = nil) {
            let maxEntry = Int(Double(configuration.costLimit) * configuration.maxEntryFraction)
            guard cost <= maxEntry else {
                remove(key)
                return
            }
            let limit = switch (configuration.entryLifetime, lifetime) {
            case let (a?, b?): min(a, b)
            case let (a, b): a ?? b
            }
            let expires = limit.map { ContinuousClock.now + $0 }
            lastMiss = nil
            if let old = entries.set(Entry(image: image, cost: cost, expires: expires), for: key) { totalCost -= old.cost }
            totalCost += cost
            // The strong entry supersedes a weak one. An image gets its weak entry only when it is
            // evicted: a weak reference gives its object a side table, and every retain and release
            // of it then takes the runtime's slow path, on every memory hit.
            if !weakEntries.isEmpty { weakEntries.removeValue(forKey: key) }
            trim(toCost: configuration.costLimit)
            if configuration.countLimit > 0 { trim(toCount: configuration.countLimit) }
        }

        mutating func remove(_ key: String) {
            if let old = entries.remove(key) { totalCost -= old.cost }
        }

        mutating func trim(toCost cost: Int) {
            while totalCost > cost, let (key, entry) = entries.popOldest() { evicted(entry, key) }
        }

        mutating func trim(toCount count: Int) {
            while entries.count > count, let (key, entry) = entries.popOldest() { evicted(entry, key) }
        }

        /// An entry left the strong cache for lack of room: with the weak cache on, it is found
        /// again for as long as something else holds the image.
        mutating func evicted(_ entry: Entry, _ key: String) {
            totalCost -= entry.cost
            // An entry with an end (its response's freshness) is not found again after it.
            guard configuration.usesWeakCache, entry.expires == nil else { return }
            weakEntries[key] = WeakEntry(content: entry.image.content, scale: entry.image.scale)
            if weakEntries.count > 2 * entries.count + 256 { compactWeakEntries() }
        }

        mutating func compactWeakEntries() {
            weakEntries = weakEntries.filter { $0.value.content != nil }
        }
    }

    private let state: Mutex<State>
    /// `webimage_memory_cache_cost_bytes{cache=…}` for an `ImageCache`'s memory (swift-metrics).
    private let costGauge: Gauge?

    /// The limits in force.
    public var configuration: Configuration { state.withLock { $0.configuration } }
    /// Sum of the costs of the entries held.
    public var totalCost: Int { state.withLock { $0.totalCost } }

    /// A memory cache with `configuration`.
    public convenience init(configuration: Configuration = .init()) {
        self.init(configuration: configuration, metricsName: nil)
    }

    /// A cache whose total cost is reported as the gauge `webimage_memory_cache_cost_bytes`
    /// with `metricsName` as its `cache` dimension.
    init(configuration: Configuration, metricsName: String?) {
        state = Mutex(State(configuration: configuration))
        costGauge = metricsName.map { Gauge(label: "webimage_memory_cache_cost_bytes", dimensions: [("cache", $0)]) }
    }

    /// Runs `body` on the state under the lock, then reports the total cost when it changed.
    private func update<T: Sendable>(_ body: @Sendable (inout State) -> T) -> T {
        let (result, cost, changed) = state.withLock { state -> (T, Int, Bool) in
            let before = state.totalCost
            let result = body(&state)
            return (result, state.totalCost, state.totalCost != before)
        }
        if changed { costGauge?.record(cost) }
        return result
    }

    /// Number of entries held (not counting the weak table).
    public var count: Int { state.withLock { $0.entries.count } }

    /// The image for `key`, or nil. A hit becomes the most recently used entry. An empty key
    /// never matches (as in SDWebImage, an empty key is not a key).
    public func image(forKey key: String) -> Image? {
        if key.isEmpty { return nil }
        return update { $0.image(forKey: key) }
    }

    /// Entries of the weak table (for tests).
    var weakEntryCount: Int { state.withLock { $0.weakEntries.count } }

    /// Whether `key` is held (without touching it).
    public func contains(_ key: String) -> Bool {
        if key.isEmpty { return false }
        return state.withLock { $0.contains(key) }
    }

    /// Stores `image` under `key`, evicting least recently used entries to stay within the
    /// limits. `cost` defaults to the image's `memoryCost`; an entry over the per-entry limit is
    /// not kept (any older entry for the key is removed). An empty key stores nothing. With
    /// `minimumUses` above 1, a key's stores before that many are counted and not kept.
    public func setImage(_ image: Image, forKey key: String, cost: Int? = nil) {
        setImage(image, forKey: key, cost: cost, lifetime: nil)
    }

    /// Stores `image` for `key` for at most `lifetime` (nil: the configuration's
    /// `entryLifetime`, else until evicted): an image whose HTTP response is fresh for a minute
    /// leaves memory after a minute. A zero lifetime stores nothing and removes the old entry.
    public func setImage(_ image: Image, forKey key: String, cost: Int? = nil, lifetime: Duration?) {
        if key.isEmpty { return }
        if let lifetime, lifetime <= .zero {
            removeImage(forKey: key)
            return
        }
        let cost = cost ?? image.memoryCost
        update { $0.store(image, forKey: key, cost: cost, lifetime: lifetime) }
    }

    /// Removes the image for `key` (from the weak table too).
    public func removeImage(forKey key: String) {
        update { state in
            state.remove(key)
            state.weakEntries.removeValue(forKey: key)
        }
    }

    /// Removes every entry, weak ones included.
    public func removeAll() {
        update { state in
            state.entries.removeAll()
            state.weakEntries.removeAll()
            state.totalCost = 0
        }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        update { $0.trim(toCost: cost) }
    }

    /// Evicts least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) {
        update { $0.trim(toCount: count) }
    }

    /// Changes the limits and trims to them.
    public func setConfiguration(_ configuration: Configuration) {
        update { state in
            if configuration.minimumUses != state.configuration.minimumUses {
                state.admission = MemoryCacheAdmission(minimumUses: configuration.minimumUses)
            }
            state.configuration = configuration
            if !configuration.usesWeakCache { state.weakEntries.removeAll() }
            state.trim(toCost: configuration.costLimit)
            if configuration.countLimit > 0 { state.trim(toCount: configuration.countLimit) }
        }
    }

    /// What the host calls under memory pressure: empties the strong cache and keeps the weak
    /// table, so images still in use elsewhere are found again without holding any memory.
    public func handleMemoryPressure() {
        update { state in
            while let (key, entry) = state.entries.popOldest() { state.evicted(entry, key) }
            state.totalCost = 0
            state.compactWeakEntries()
        }
    }
}

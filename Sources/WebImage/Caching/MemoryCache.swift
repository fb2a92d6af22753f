import CoreMetrics

/// Decoded images in memory with least-recently-used eviction (SDWebImage's `SDMemoryCache`).
///
/// An actor: every call is one hop to its executor (tens of nanoseconds when uncontended).
/// Lookups, inserts and evictions are O(1). With the weak cache on (the default), an image
/// evicted while a caller still holds it is found again and put back, as SDWebImage's
/// `shouldUseWeakMemoryCache` does.
public actor MemoryCache {
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

        /// 15 % of the memory this process may use (cgroup v2 `memory.max`, else physical RAM).
        public static var defaultCostLimit: Int { ProcessMemory.defaultCacheCostLimit }

        /// A configuration; every argument has the documented default.
        public init(costLimit: Int = Configuration.defaultCostLimit, countLimit: Int = 0, maxEntryFraction: Double = 0.1,
                    entryLifetime: Duration? = nil, usesWeakCache: Bool = true) {
            self.costLimit = costLimit
            self.countLimit = countLimit
            self.maxEntryFraction = maxEntryFraction
            self.entryLifetime = entryLifetime
            self.usesWeakCache = usesWeakCache
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

    /// The limits in force.
    public private(set) var configuration: Configuration
    /// Sum of the costs of the entries held.
    public private(set) var totalCost = 0 {
        didSet { costGauge?.record(totalCost) }
    }
    /// `webimage_memory_cache_cost_bytes{cache=…}` for an `ImageCache`'s memory (swift-metrics).
    private let costGauge: Gauge?
    private var entries = LRUList<String, Entry>()
    private var weakEntries: [String: WeakEntry] = [:]

    /// A memory cache with `configuration`.
    public init(configuration: Configuration = .init()) {
        self.init(configuration: configuration, metricsName: nil)
    }

    /// A cache whose total cost is reported as the gauge `webimage_memory_cache_cost_bytes`
    /// with `metricsName` as its `cache` dimension.
    init(configuration: Configuration, metricsName: String?) {
        self.configuration = configuration
        costGauge = metricsName.map { Gauge(label: "webimage_memory_cache_cost_bytes", dimensions: [("cache", $0)]) }
    }

    /// Number of entries held (not counting the weak table).
    public var count: Int { entries.count }

    /// The image for `key`, or nil. A hit becomes the most recently used entry. An empty key
    /// never matches (as in SDWebImage, an empty key is not a key).
    public func image(forKey key: String) -> Image? {
        if key.isEmpty { return nil }
        if let entry = entries.touch(key) {
            if let expires = entry.expires, expires <= .now {
                remove(key)
                return nil
            }
            return entry.image
        }
        guard configuration.usesWeakCache, let weak = weakEntries[key] else { return nil }
        guard let content = weak.content else {
            weakEntries.removeValue(forKey: key)
            return nil
        }
        let image = Image(content: content, scale: weak.scale)
        insert(image, forKey: key, cost: image.memoryCost)
        return image
    }

    /// Entries of the weak table (for tests).
    var weakEntryCount: Int { weakEntries.count }

    /// Whether `key` is held (without touching it).
    public func contains(_ key: String) -> Bool {
        if key.isEmpty { return false }
        if entries.peek(key) != nil { return true }
        return configuration.usesWeakCache && weakEntries[key]?.content != nil
    }

    /// Stores `image` under `key`, evicting least recently used entries to stay within the
    /// limits. `cost` defaults to the image's `memoryCost`; an entry over the per-entry limit is
    /// not kept (any older entry for the key is removed). An empty key stores nothing.
    public func setImage(_ image: Image, forKey key: String, cost: Int? = nil) {
        if key.isEmpty { return }
        insert(image, forKey: key, cost: cost ?? image.memoryCost)
    }

    private func insert(_ image: Image, forKey key: String, cost: Int) {
        let maxEntry = Int(Double(configuration.costLimit) * configuration.maxEntryFraction)
        guard cost <= maxEntry else {
            remove(key)
            return
        }
        let expires = configuration.entryLifetime.map { ContinuousClock.now + $0 }
        if let old = entries.set(Entry(image: image, cost: cost, expires: expires), for: key) { totalCost -= old.cost }
        totalCost += cost
        // The strong entry supersedes a weak one. An image gets its weak entry only when it is
        // evicted: a weak reference gives its object a side table, and every retain and release
        // of it then takes the slow path (a third of a memory hit's time went there).
        if !weakEntries.isEmpty { weakEntries.removeValue(forKey: key) }
        trim(toCost: configuration.costLimit)
        if configuration.countLimit > 0 { trim(toCount: configuration.countLimit) }
    }

    /// Removes the image for `key` (from the weak table too).
    public func removeImage(forKey key: String) {
        remove(key)
        weakEntries.removeValue(forKey: key)
    }

    private func remove(_ key: String) {
        if let old = entries.remove(key) { totalCost -= old.cost }
    }

    /// Removes every entry, weak ones included.
    public func removeAll() {
        entries.removeAll()
        weakEntries.removeAll()
        totalCost = 0
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        while totalCost > cost, let (key, entry) = entries.popOldest() { evicted(entry, key) }
    }

    /// Evicts least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) {
        while entries.count > count, let (key, entry) = entries.popOldest() { evicted(entry, key) }
    }

    /// An entry left the strong cache for lack of room: with the weak cache on, it is found
    /// again for as long as something else holds the image.
    private func evicted(_ entry: Entry, _ key: String) {
        totalCost -= entry.cost
        guard configuration.usesWeakCache else { return }
        weakEntries[key] = WeakEntry(content: entry.image.content, scale: entry.image.scale)
        if weakEntries.count > 2 * entries.count + 256 { compactWeakEntries() }
    }

    /// Changes the limits and trims to them.
    public func setConfiguration(_ configuration: Configuration) {
        self.configuration = configuration
        if !configuration.usesWeakCache { weakEntries.removeAll() }
        trim(toCost: configuration.costLimit)
        if configuration.countLimit > 0 { trim(toCount: configuration.countLimit) }
    }

    /// What the host calls under memory pressure: empties the strong cache and keeps the weak
    /// table, so images still in use elsewhere are found again without holding any memory.
    public func handleMemoryPressure() {
        while let (key, entry) = entries.popOldest() { evicted(entry, key) }
        totalCost = 0
        compactWeakEntries()
    }

    private func compactWeakEntries() {
        weakEntries = weakEntries.filter { $0.value.content != nil }
    }
}

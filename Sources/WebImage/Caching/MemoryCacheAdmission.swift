/// Which stores a memory cache takes: with `minimumUses` above 1, a key is kept from its
/// `minimumUses`-th store on (nginx's `proxy_cache_min_uses`, the doorkeeper of TinyLFU), so
/// that images made once and never asked for again do not fill the cache and push out the ones
/// that are. The keys stored too few times so far are remembered by their hash, the last
/// `window` of them; a key forgotten starts its count again.
struct MemoryCacheAdmission {
    /// Stores a key needs before its image is kept; 1 keeps every image.
    let minimumUses: Int
    /// How many keys not yet kept are remembered.
    let window: Int
    /// Stores seen so far, by key hash, of the keys not yet kept.
    private var uses: [Int: Int] = [:]
    /// The hashes in `uses`, oldest first from `next` (a ring once full).
    private var order: [Int] = []
    private var next = 0

    init(minimumUses: Int, window: Int = 4096) {
        self.minimumUses = minimumUses
        self.window = max(1, window)
    }

    /// Counts one store of `key`; whether its image is kept.
    mutating func admits(_ key: String) -> Bool {
        guard minimumUses > 1 else { return true }
        let hash = key.hashValue
        guard let seen = uses[hash] else {
            remember(hash)
            return false
        }
        if seen + 1 >= minimumUses {
            // Its slot in the ring stays until overwritten. Should the key be counted again by
            // then, that overwrite ends its new count early, and the count starts again.
            uses[hash] = nil
            return true
        }
        uses[hash] = seen + 1
        return false
    }

    private mutating func remember(_ hash: Int) {
        uses[hash] = 1
        if order.count < window {
            order.append(hash)
            return
        }
        uses[order[next]] = nil
        order[next] = hash
        next = (next + 1) % window
    }
}

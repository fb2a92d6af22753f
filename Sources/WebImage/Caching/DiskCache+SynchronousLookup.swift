import Foundation

// Lookups on the caller's thread, for code that must not suspend (a synchronous API of the
// caller's own): SDWebImage's `diskImageDataExistsWithKey:` and `diskImageDataForKey:`, Nuke's
// `DataCache.containsData(for:)` and `cachedData(for:)`. Entries are written to a temporary
// file and renamed, so a read from any thread sees a whole entry or none.
extension DiskCache {
    /// Whether an entry for `key` exists (here or in an additional directory), answered on the
    /// caller's thread without suspending.
    ///
    /// It blocks that thread for a file-system lookup or two (none for a key the cache knows is
    /// absent). Call it from a thread of your own or from synchronous code outside Swift
    /// concurrency; on the cooperative pool, `await` ``contains(_:)`` instead.
    public nonisolated func containsData(forKey key: String) -> Bool {
        guard !key.isEmpty else { return false }
        let name = DiskCache.fileName(forKey: key)
        if isKnownAbsent(name) { return false }
        configuration.hookBeforeIO()
        return candidatePaths(forKey: key, name: name).contains(where: isRegularFile)
    }

    /// The stored data for `key`, read on the caller's thread without suspending; nil when it
    /// is missing or unreadable. Looks where ``data(forKey:)`` looks (this folder, the name
    /// SDWebImage used before 5.x, the additional directories).
    ///
    /// It blocks that thread for one file read. Call it from a thread of your own or from
    /// synchronous code outside Swift concurrency; on the cooperative pool, `await`
    /// ``data(forKey:)`` instead. With access-date expiry the read is recorded on the cache's
    /// own thread afterwards; an entry found under the older name is moved to the current one
    /// by the next asynchronous read.
    public nonisolated func cachedData(forKey key: String) -> Data? {
        guard !key.isEmpty else { return nil }
        let name = DiskCache.fileName(forKey: key)
        if isKnownAbsent(name) { return nil }
        configuration.hookBeforeIO()
        for path in candidatePaths(forKey: key, name: name) {
            guard let data = read(path) else { continue }
            if configuration.expireType == .accessDate, path == self.path(name) {
                Task { await self.recordAccess(name) }
            }
            return data
        }
        return nil
    }

    /// Where `key`'s entry may be, in the order the reads look.
    private nonisolated func candidatePaths(forKey key: String, name: String) -> [String] {
        let names = [name] + (DiskCache.legacyFileName(forKey: key, current: name).map { [$0] } ?? [])
        return names.map(path) + configuration.additionalDirectories.flatMap { directory in names.map { directory.path + "/" + $0 } }
    }
}

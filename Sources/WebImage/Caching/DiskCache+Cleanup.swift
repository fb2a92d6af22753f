import CWebImageSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// The index of sizes and dates, and the cleanup that uses it.
extension DiskCache {
    /// Bytes held by the entries, and by temporary files of writers still at work (those of
    /// dead writers are removed when the cache opens and by cleanup).
    public func totalSize() -> Int {
        ensureIndex()
        return indexedSize + temporaryBytes
    }

    /// Number of entries.
    public func count() -> Int {
        ensureIndex()
        return index?.count ?? 0
    }

    /// Removes entries older than `maxAge`, then, if the total is over `maxSize`, the oldest
    /// ones until at most half of `maxSize` is used. Uses the in-memory index (built once).
    @discardableResult
    public func removeExpiredData() -> CleanupReport {
        ensureIndex()
        sweepTemporaryFiles()
        guard let entries = index else { return CleanupReport(removedCount: 0, removedBytes: 0) }
        var report = CleanupReport(removedCount: 0, removedBytes: 0)
        let type = configuration.expireType
        func date(_ entry: Entry) -> Date { entry.date(type) }
        if let maxAge = configuration.maxAge {
            let seconds = Double(maxAge.components.seconds) + Double(maxAge.components.attoseconds) / 1e18
            let limit = Date().addingTimeInterval(-seconds)
            for (name, entry) in entries where date(entry) < limit {
                if let failure = removeFile(name) {
                    report.failures.append(failure)
                } else {
                    report.removedCount += 1
                    report.removedBytes += entry.size
                }
            }
        }
        if configuration.maxSize > 0, indexedSize + temporaryBytes > configuration.maxSize, let remaining = index {
            let target = configuration.maxSize / 2
            for (name, entry) in remaining.sorted(by: { date($0.value) < date($1.value) }) {
                if indexedSize + temporaryBytes <= target { break }
                if let failure = removeFile(name) {
                    report.failures.append(failure)
                } else {
                    report.removedCount += 1
                    report.removedBytes += entry.size
                }
            }
        }
        return report
    }

    /// Builds the index from the directory once (readdir and fstatat, no per-file URL work);
    /// removes temporary files a crash left behind.
    func ensureIndex() {
        guard index == nil else { return }
        var entries: [String: Entry] = [:]
        var temporaries: [String: Int] = [:]
        var sideFiles: [String] = []
        var total = 0
        let stale = Date().timeIntervalSince1970 - 3600
        indexListedFolder = DiskCache.forEachFile(in: directoryPath) { fd, name in
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
            let modified = DiskCache.seconds(info.st_mtim)
            if name.hasPrefix(".tmp-") {
                // A dead writer's temporary file goes now; a live writer's counts until it is renamed.
                if DiskCache.isOrphaned(temporary: name, modified: modified, staleBefore: stale) {
                    unlinkat(fd, name, 0)
                } else {
                    temporaries[name] = Int(info.st_size)
                }
                return
            }
            if name.hasPrefix(".ext-") { sideFiles.append(String(name.dropFirst(5))); return }
            // Only the cache's own files are entries: anything else in the folder is not
            // counted, and so never removed by cleanup.
            guard DiskCache.isCacheFileName(name), (info.st_mode & S_IFMT) == S_IFREG else { return }
            let size = Int(info.st_size)
            // Birth times cost a statx each: asked only when they decide expiry.
            var created = modified
            var birthSeconds: Int64 = 0, birthNanoseconds: UInt32 = 0
            if configuration.expireType == .creationDate, wi_file_birth_time(fd, name, &birthSeconds, &birthNanoseconds) == 0 {
                created = Double(birthSeconds) + Double(birthNanoseconds) / 1e9
            }
            entries[name] = Entry(size: size, modified: Date(timeIntervalSince1970: modified),
                                  accessed: Date(timeIntervalSince1970: max(DiskCache.seconds(info.st_atim), modified)),
                                  created: Date(timeIntervalSince1970: created),
                                  changed: Date(timeIntervalSince1970: DiskCache.seconds(info.st_ctim)))
            total += size
        }
        // A side file without its entry (a crash between removing the two) would attach itself to
        // the next entry of that name: it goes.
        for name in sideFiles {
            if entries[name] != nil { entries[name]?.hasSideFile = true } else { unlink(path(".ext-\(name)")) }
        }
        index = entries
        indexedSize = total
        temporaryBytes = temporaries.values.reduce(0, +)
        startCleanupTimer()
    }

    /// Calls `body` with the folder's descriptor and each name in `path` but `.` and `..`
    /// (readdir: no per-file URL work); false, with errno set, when the folder cannot be opened.
    @discardableResult
    static func forEachFile(in path: String, _ body: (Int32, String) -> Void) -> Bool {
        guard let stream = opendir(path) else { return false }
        defer { closedir(stream) }
        let fd = dirfd(stream)
        // The name is read in place, up to its NUL: a record is only as long as its name, so
        // copying the declared 256-byte d_name read past it (AddressSanitizer found it).
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let item = readdir(stream) {
            let name = String(cString: (UnsafeRawPointer(item) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { body(fd, name) }
        }
        return true
    }

    /// Whether a temporary file was left by a writer that is gone: its process (named in the
    /// file, `.tmp-PID-TOKEN-N`) no longer exists, or it is over an hour old whatever its name
    /// (older names carry no process id; a process id can be reused).
    nonisolated static func isOrphaned(temporary name: String, modified: Double, staleBefore: Double) -> Bool {
        if modified < staleBefore { return true }
        let fields = name.dropFirst(5).split(separator: "-", maxSplits: 1)
        guard fields.count == 2, let pid = pid_t(fields[0]), pid > 0 else { return false }
        if pid == getpid() { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Removes the temporary files of dead writers (cleanup does this too, not only opening)
    /// and counts the others' bytes.
    private func sweepTemporaryFiles() {
        let stale = Date().timeIntervalSince1970 - 3600
        var bytes = 0
        DiskCache.forEachFile(in: directoryPath) { fd, name in
            guard name.hasPrefix(".tmp-") else { return }
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
            if DiskCache.isOrphaned(temporary: name, modified: DiskCache.seconds(info.st_mtim), staleBefore: stale) {
                unlinkat(fd, name, 0)
            } else {
                bytes += Int(info.st_size)
            }
        }
        temporaryBytes = bytes
    }

    /// When the file at `path` was born, where the file system records it (statx); else nil.
    static func birthTime(ofFile path: String) -> Date? {
        var seconds: Int64 = 0, nanoseconds: UInt32 = 0
        guard wi_file_birth_time(AT_FDCWD, path, &seconds, &nanoseconds) == 0 else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    private static func seconds(_ time: timespec) -> Double { Double(time.tv_sec) + Double(time.tv_nsec) / 1e9 }

    /// When the index last saw `key`'s entry read (for tests).
    func indexedAccessDate(forKey key: String) -> Date? { index?[DiskCache.fileName(forKey: key)]?.accessed }

    func recordAccess(_ name: String) {
        ensureIndex()
        let now = Date()
        index?[name]?.accessed = now
        index?[name]?.changed = now   // setting the atime changes the inode
        // Persist it in the file's atime too, so a new index sees it.
        var times = [timespec(tv_sec: Int(now.timeIntervalSince1970), tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: DiskCache.timeOmit)]
        utimensat(AT_FDCWD, path(name), &times, 0)
    }

    /// Linux's UTIME_OMIT: leave that time unchanged.
    private static let timeOmit = (1 << 30) - 2

    private func startCleanupTimer() {
        guard cleanupTask == nil, let interval = configuration.cleanupInterval else { return }
        cleanupTask = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                await self.removeExpiredData()
            }
        }
    }
}

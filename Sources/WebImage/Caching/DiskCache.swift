import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Encoded image data on disk, one file per key (SDWebImage's `SDDiskCache`).
///
/// The actor runs on an executor of its own (a dedicated thread), so every blocking file
/// operation happens off Swift's cooperative pool. Files are named with the lowercase hex MD5
/// of the key plus the key's path extension; every write goes to a temporary file that is then
/// renamed, so no reader ever sees a partial entry and a crash leaves none. Sizes and dates are
/// kept in an index built once, so cleanup does not re-read every file's attributes.
///
/// Its parts, one file each: `DiskCache+Configuration` (limits, expiry, reports),
/// `DiskCache+Paths` (folders and file names), `DiskCache+Reading`, `DiskCache+Writing`
/// (stores and removals), `DiskCache+Cleanup` (the index, expiry and size limits) and
/// `DiskCache+ExtendedData` (extended data, and moving entries from an older folder).
public actor DiskCache {
    /// The folder holding the entries.
    public nonisolated let directory: URL
    /// The limits in force.
    public nonisolated let configuration: Configuration
    private nonisolated let executor: ThreadExecutor
    /// `directory.path`, to build entry paths without URL arithmetic on the hot paths.
    nonisolated let directoryPath: String
    var index: [String: Entry]?
    var indexedSize = 0
    /// Bytes in other writers' temporary files (counted in the size until they are renamed or swept).
    var temporaryBytes = 0
    var cleanupTask: Task<Void, Never>?
    /// The negative lookup (`DiskCache+Presence`): the folder's names, readable from any
    /// thread, and when the shared counter was last tried and the folder last listed for it.
    nonisolated let knownNames = KnownNames()
    var generationTried: ContinuousClock.Instant?
    var namesListed: ContinuousClock.Instant?
    /// Whether the last index build listed the folder (an unreadable one lists nothing).
    var indexListedFolder = false
    /// Random per cache object, with `temporaryCounter` after it: temporary names that no other
    /// writer uses, without a UUID per store (Foundation reads `/dev/urandom` for each one: an
    /// open, a read and a close).
    private nonisolated let temporaryToken = String(UInt64.random(in: .min ... .max), radix: 16)
    var temporaryCounter: UInt64 = 0
    /// `directoryPath` + `/.tmp-PID-TOKEN-`, built once: a temporary path is this and the counter.
    /// (The process id cannot change under a cache: a forked child has no copy of its thread.)
    nonisolated let temporaryPrefix: String

    /// The executor every method runs on: the cache's own I/O thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// A cache in `directory` (created when first written).
    public init(directory: URL, configuration: Configuration = .init()) {
        self.directory = directory.standardizedFileURL
        self.directoryPath = self.directory.path
        self.temporaryPrefix = directoryPath + "/.tmp-\(getpid())-\(temporaryToken)-"
        self.configuration = configuration
        self.executor = ThreadExecutor(name: "webimage.disk-cache")
    }

    deinit {
        cleanupTask?.cancel()
        executor.stop()
    }

}

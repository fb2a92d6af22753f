import Foundation

// The disk cache's settings and the reports its removals give.
extension DiskCache {
    /// Which date makes an entry old.
    public enum ExpireType: Sendable {
        /// When the entry was last written (the default).
        case modificationDate
        /// When it was last read or written, recorded by the cache itself (many Linux mounts
        /// do not update atime).
        case accessDate
        /// When the entry's file was created (its birth time, from statx). A file system that
        /// does not record birth times falls back to the modification date. Writing an entry
        /// again creates a new file.
        case creationDate
        /// When the entry's file or its attributes last changed (the inode's change time):
        /// writing it, attaching extended data, and recording an access all count.
        case changeDate
    }

    /// Limits and policies. Every default is the one in DESIGN.md.
    public struct Configuration: Sendable {
        /// Entries older than this are removed by cleanup (default 7 days; nil keeps them).
        public var maxAge: Duration?
        /// Above this many bytes, cleanup removes the oldest entries down to half of it
        /// (default 0: no limit).
        public var maxSize: Int
        /// Which date counts for `maxAge` and for "oldest".
        public var expireType: ExpireType
        /// Cleanup also runs this often while the cache is in use (default one hour; nil: only
        /// when asked and after a store goes over `maxSize`).
        public var cleanupInterval: Duration?
        /// Read-only directories searched after a miss (pre-populated caches, same file names).
        public var additionalDirectories: [URL]
        /// Keep extended data in extended attributes when the file system allows (default
        /// true); false always uses hidden side files (network file systems, backups that drop xattrs).
        public var usesExtendedAttributes: Bool
        /// Answer a read of a key that is not on disk from the index of the folder's names,
        /// without a system call (default true; see `DiskCache+Presence`): kept right across
        /// the processes that share the folder through its `.generation` counter. False asks
        /// the file system on every miss.
        public var negativeLookup = true
        /// Runs on the cache's I/O thread before each call that reaches the file system (a miss
        /// answered by the negative lookup does not): for tests that simulate a
        /// slow disk (`@_spi(Testing)`), nil otherwise.
        @_spi(Testing) public var ioHook: (@Sendable () -> Void)? {
            get { hook }
            set { hook = newValue }
        }
        private var hook: (@Sendable () -> Void)?

        /// Runs the hook, if any.
        func hookBeforeIO() { hook?() }

        /// A configuration; every argument has the documented default.
        public init(maxAge: Duration? = .seconds(7 * 24 * 3600), maxSize: Int = 0, expireType: ExpireType = .modificationDate,
                    cleanupInterval: Duration? = .seconds(3600), additionalDirectories: [URL] = [],
                    usesExtendedAttributes: Bool = true) {
            self.usesExtendedAttributes = usesExtendedAttributes
            self.maxAge = maxAge
            self.maxSize = maxSize
            self.expireType = expireType
            self.cleanupInterval = cleanupInterval
            self.additionalDirectories = additionalDirectories
        }

        /// A configuration with a hook that runs before each file operation (tests).
        @_spi(Testing) public init(ioHook: @escaping @Sendable () -> Void) {
            self.init()
            hook = ioHook
        }
    }

    /// What a cleanup or a clear removed, and what it could not remove.
    public struct CleanupReport: Sendable, Equatable {
        /// Entries removed.
        public var removedCount: Int
        /// Bytes freed.
        public var removedBytes: Int
        /// Files that should have gone but are still there (read-only directory, permissions),
        /// each with the reason the system gave. Empty when everything asked for was removed.
        public var failures: [RemovalFailure] = []

        /// Whether everything that was to be removed was removed.
        public var succeeded: Bool { failures.isEmpty }

        /// A report of `removedCount` entries and `removedBytes` bytes removed, and `failures`.
        public init(removedCount: Int, removedBytes: Int, failures: [RemovalFailure] = []) {
            self.removedCount = removedCount
            self.removedBytes = removedBytes
            self.failures = failures
        }
    }

    /// A file the cache could not remove, and why.
    public struct RemovalFailure: Sendable, Equatable, CustomStringConvertible {
        /// The file's path.
        public var path: String
        /// The system's reason, e.g. "Permission denied".
        public var reason: String

        /// "path: reason".
        public var description: String { "\(path): \(reason)" }
    }

    struct Entry {
        var size: Int
        var modified: Date
        var accessed: Date
        var created: Date
        var changed: Date
        var hasSideFile = false

        /// An entry all of whose dates are `date`.
        init(size: Int, at date: Date) {
            self.init(size: size, modified: date, accessed: date, created: date, changed: date)
        }

        init(size: Int, modified: Date, accessed: Date, created: Date, changed: Date) {
            self.size = size
            self.modified = modified
            self.accessed = accessed
            self.created = created
            self.changed = changed
        }

        /// The date `type` ages the entry by.
        func date(_ type: ExpireType) -> Date {
            switch type {
            case .modificationDate: modified
            case .accessDate: accessed
            case .creationDate: created
            case .changeDate: changed
            }
        }
    }
}

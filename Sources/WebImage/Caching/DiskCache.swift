import CWebImageCodecs
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
public actor DiskCache {
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
        /// Runs on the cache's I/O thread before each file operation: for tests that simulate a
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

    /// The folder holding the entries.
    public nonisolated let directory: URL
    /// The limits in force.
    public nonisolated let configuration: Configuration
    private nonisolated let executor: ThreadExecutor
    /// `directory.path`, to build entry paths without URL arithmetic on the hot paths.
    private nonisolated let directoryPath: String
    private var index: [String: Entry]?
    private var indexedSize = 0
    /// Bytes in other writers' temporary files (counted in the size until they are renamed or swept).
    private var temporaryBytes = 0
    private var cleanupTask: Task<Void, Never>?
    /// Random per cache object, with `temporaryCounter` after it: temporary names that no other
    /// writer uses, without a UUID per store (Foundation reads `/dev/urandom` for each one: an
    /// open, a read and a close, a third of a small store's system calls).
    private nonisolated let temporaryToken = String(UInt64.random(in: .min ... .max), radix: 16)
    private var temporaryCounter: UInt64 = 0
    /// `directoryPath` + `/.tmp-PID-TOKEN-`, built once: a temporary path is this and the counter.
    /// (The process id cannot change under a cache: a forked child has no copy of its thread.)
    private nonisolated let temporaryPrefix: String

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

    /// `$XDG_CACHE_HOME` (or `~/.cache`) `/com.webimage.cache/<namespace>`. A relative or empty
    /// `XDG_CACHE_HOME` is ignored, as the XDG Base Directory specification says. The namespace
    /// is always one folder inside `com.webimage.cache`: a name that is not plain (see
    /// `ImageCache.validate(namespace:)`) is escaped (`%2F` for `/`, `%2E` for a leading dot,
    /// `%25` for `%`), so that no namespace can name a folder above or beside the others.
    public static func defaultDirectory(namespace: String) -> URL {
        defaultDirectory(namespace: namespace, environment: ProcessInfo.processInfo.environment)
    }

    /// `defaultDirectory(namespace:)` with the environment given (for tests).
    static func defaultDirectory(namespace: String, environment: [String: String]) -> URL {
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? environment["HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0).appendingPathComponent(".cache") : nil }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("com.webimage.cache").appendingPathComponent(folderName(forNamespace: namespace))
    }

    /// The folder name for `namespace`: the namespace itself when it is plain, otherwise escaped
    /// so that it is a single, non-hidden path component (never empty, `.` or `..`). Distinct
    /// namespaces get distinct folders.
    nonisolated static func folderName(forNamespace namespace: String) -> String {
        if namespace.isEmpty { return "%" }
        var out = ""
        for (offset, scalar) in namespace.unicodeScalars.enumerated() {
            let unsafe = scalar == "/" || scalar == "%" || scalar == "\\" || scalar.value < 0x20 || scalar.value == 0x7F
                || (offset == 0 && scalar == ".")
            if unsafe {
                out += String(format: "%%%02X", scalar.value)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `name` is a file this cache writes: an entry (32 lowercase hex digits of MD5,
    /// optionally a plain extension), a temporary file, or an extended-data side file. Only
    /// such files are ever removed, so a cache pointed at a folder shared with other files
    /// never deletes theirs.
    nonisolated static func isCacheFileName(_ name: String) -> Bool {
        if name.hasPrefix(".tmp-") { return name.count > 5 }
        if name.hasPrefix(".ext-") { return isEntryName(Substring(name.dropFirst(5))) }
        return isEntryName(Substring(name))
    }

    private nonisolated static func isEntryName(_ name: Substring) -> Bool {
        let utf8 = name.utf8
        guard utf8.count >= 32 else { return false }
        let digest = utf8.prefix(32)
        guard digest.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else { return false }
        let rest = utf8.dropFirst(32)
        guard let dot = rest.first else { return true }
        let ext = rest.dropFirst()
        return dot == 0x2E && !ext.isEmpty
            && ext.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }
    }

    /// The file name for `key`: lowercase hex MD5 of its UTF-8 bytes, plus `.` and the key's
    /// path extension when it is plain (letters and digits) and the name stays within 255 bytes.
    public nonisolated static func fileName(forKey key: String) -> String {
        let ext = plainURLPath(key).map(PathExtension.ofASCII)
            ?? URLComponents(string: key).map { PathExtension.of($0.path) } ?? PathExtension.of(key)
        // Letters and digits only: bytes, since an ASCII character is one byte and a letter or a
        // digit exactly when that byte is one.
        let plain = !ext.isEmpty && ext.utf8.count <= 255 - 33
            && ext.utf8.allSatisfy { $0.isLetterASCII || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
        return Digest.md5(key, suffix: plain ? ext : nil)
    }

    /// The path of `key` read as a URL reference, as `URLComponents(string:)` gives it, for keys
    /// made only of characters that need no escaping and no `%` or brackets (the usual image URL);
    /// nil for any other key (the caller then asks `URLComponents`, which parses a URL for every
    /// store and read: a fifth of a small store's time on its thread).
    nonisolated static func plainURLPath(_ key: String) -> String? {
        var utf8 = Array(key.utf8)[...]
        guard utf8.count(where: { $0 == UInt8(ascii: "#") }) <= 1 else { return nil }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                continue
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "/"),
                 UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"),
                 UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","),
                 UInt8(ascii: ";"), UInt8(ascii: "="):
                continue
            default:
                return nil
            }
        }
        // Up to the query or fragment.
        if let end = utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) { utf8 = utf8[..<end] }
        // A scheme: a letter, then letters, digits, "+", "-" or ".", then ":" (before any "/").
        if let colon = utf8.firstIndex(of: UInt8(ascii: ":")), colon > utf8.startIndex,
           !utf8[..<colon].contains(UInt8(ascii: "/")) {
            let scheme = utf8[..<colon]
            let isScheme = scheme.first!.isLetterASCII && scheme.allSatisfy {
                $0.isLetterASCII || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            }
            guard isScheme else { return nil }
            utf8 = utf8[(colon + 1)...]
        }
        // An authority after "//" runs to the next "/": a plain host and an optional port of
        // digits only (user information, or anything URLComponents might refuse, is left to it).
        if utf8.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")]) {
            let rest = utf8.dropFirst(2)
            let end = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
            let authority = rest[..<end]
            let colon = authority.firstIndex(of: UInt8(ascii: ":")) ?? authority.endIndex
            let hostIsPlain = authority[..<colon].allSatisfy {
                $0.isLetterASCII || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
            }
            let portIsPlain = authority[colon...].dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            guard hostIsPlain, portIsPlain else { return nil }
            utf8 = rest[end...]
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// Where the entry for `key` lives (whether or not it exists).
    public nonisolated func fileURL(forKey key: String) -> URL {
        directory.appendingPathComponent(DiskCache.fileName(forKey: key))
    }

    // MARK: - Reading

    /// The stored data for `key`, or nil (missing, unreadable, or not a file). Looks in the
    /// additional read-only directories after a miss. An entry under SDWebImage's older name
    /// (the MD5 without the extension, as SDWebImage before 5.x and its extra paths wrote it)
    /// is found too, and moved to the current name in this cache's own folder.
    public func data(forKey key: String) -> Data? {
        configuration.hookBeforeIO()
        return readData(forKey: key)
    }

    /// The data and the extended data of `key`'s entry, in one call on the disk thread (as
    /// asked); nil when there is no entry.
    public func entry(forKey key: String, includingData: Bool = true, includingExtendedData: Bool = true)
        -> (data: Data?, extendedData: Data?)? {
        configuration.hookBeforeIO()
        let data = includingData ? readData(forKey: key) : nil
        if includingData, data == nil { return nil }
        let extended = includingExtendedData ? readExtendedData(forKey: key) : nil
        return (data, extended)
    }

    private func readData(forKey key: String) -> Data? {
        if key.isEmpty { return nil }
        let name = DiskCache.fileName(forKey: key)
        if let data = read(path(name)) {
            if configuration.expireType == .accessDate { recordAccess(name) }
            return data
        }
        let legacy = DiskCache.legacyFileName(forKey: key, current: name)
        if let legacy, let data = read(path(legacy)) {
            migrateLegacy(legacy, to: name)
            return data
        }
        for extra in configuration.additionalDirectories {
            if let data = read(extra.path + "/" + name) { return data }
            if let legacy, let data = read(extra.path + "/" + legacy) { return data }
        }
        return nil
    }

    /// SDWebImage's name before the extension was added: the bare MD5; nil when that is the
    /// current name already (a key without a plain extension).
    nonisolated static func legacyFileName(forKey key: String, current: String) -> String? {
        let digest = String(current.prefix(32))
        return digest == current ? nil : digest
    }

    /// Renames an entry found under its legacy name to the current one (with its side file).
    private func migrateLegacy(_ legacy: String, to name: String) {
        guard rename(path(legacy), path(name)) == 0 else { return }
        rename(path(".ext-\(legacy)"), path(".ext-\(name)"))
        if let entry = index?.removeValue(forKey: legacy) { index?[name] = entry }
    }

    private nonisolated func path(_ name: String) -> String { directoryPath + "/" + name }

    /// The whole file, or nil when it is missing, not a regular file, or unreadable.
    private func read(_ path: String) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        var data = Data(count: Int(info.st_size))
        let complete = data.withUnsafeMutableBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.read(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
        return complete ? data : nil
    }

    /// Whether an entry for `key` exists (here or in an additional directory).
    public func contains(_ key: String) -> Bool {
        if key.isEmpty { return false }
        let name = DiskCache.fileName(forKey: key)
        configuration.hookBeforeIO()
        if isRegularFile(path(name)) { return true }
        let names = [name] + (DiskCache.legacyFileName(forKey: key, current: name).map { [$0] } ?? [])
        if names.count > 1, isRegularFile(path(names[1])) { return true }
        return configuration.additionalDirectories.contains { directory in names.contains { isRegularFile(directory.path + "/" + $0) } }
    }

    private func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    // MARK: - Writing

    /// Writes `data` for `key` atomically (temporary file, then rename). An empty key stores
    /// nothing (SDWebImage ignores it too). The entry's previous extended data goes with it.
    /// - Throws: `ImageError.cacheWriteFailed` (full disk, read-only or unusable directory);
    ///   the previous entry for `key`, if any, and every other entry are unaffected.
    public func store(_ data: Data, forKey key: String) throws {
        try store(data, extendedData: nil, forKey: key)
    }

    /// Writes `data` for `key` with its extended data as one step: in an extended attribute
    /// the data and the metadata appear together (the attribute is set on the temporary file
    /// before it is renamed into place), so a crash leaves the old pair or the new one. Where
    /// the file system has no extended attributes, the old side file is removed before the
    /// rename and the new one written after it: a crash can leave the entry without its
    /// extended data, never with another entry's.
    /// - Throws: `ImageError.cacheWriteFailed`, as `store(_:forKey:)`.
    public func store(_ data: Data, extendedData: Data?, forKey key: String) throws {
        if key.isEmpty { return }
        configuration.hookBeforeIO()
        let name = DiskCache.fileName(forKey: key)
        ensureIndex()
        let attribute = configuration.usesExtendedAttributes ? extendedData : nil
        if index == nil || index?[name]?.hasSideFile == true { unlink(path(".ext-\(name)")) }
        let attached = try writeFile(data, to: path(name), attribute: attribute)
        if let old = index?.updateValue(Entry(size: data.count, at: Date()), forKey: name) { indexedSize -= old.size }
        indexedSize += data.count
        if let extendedData, !attached {
            try writeFile(extendedData, to: path(".ext-\(name)"))
            index?[name]?.hasSideFile = true
        }
        if configuration.maxSize > 0, indexedSize + temporaryBytes > configuration.maxSize { removeExpiredData() }
    }

    /// Writes atomically; when the directory was removed under us, makes it again and retries once.
    /// Returns whether `attribute` went into the file's extended attribute.
    /// Throws only `ImageError.cacheWriteFailed`.
    @discardableResult
    private func writeFile(_ data: Data, to destination: String, attribute: Data? = nil) throws -> Bool {
        do {
            return try writeAtomically(data, to: destination, attribute: attribute)
        } catch let error as POSIXError where error.code == .ENOENT {
            try createDirectory()
            do { return try writeAtomically(data, to: destination, attribute: attribute) } catch let error as POSIXError {
                throw ImageError.cacheWriteFailed(path: destination, reason: String(cString: strerror(error.code.rawValue)))
            }
        }
    }

    private func createDirectory() throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ImageError.cacheWriteFailed(path: directory.path, reason: (error as NSError).localizedDescription)
        }
    }

    private func writeAtomically(_ data: Data, to destination: String, attribute: Data?) throws -> Bool {
        if index == nil, !FileManager.default.fileExists(atPath: directoryPath) { try createDirectory() }
        // The writer's process id is in the name: a cache that opens can tell the temporary files
        // of writers that died (SIGKILL mid-write) from those of writers still at work.
        let temporary = temporaryPrefix + String(temporaryCounter, radix: 16)
        temporaryCounter &+= 1
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure(errno, destination) }
        var failedWith: Int32 = 0
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failedWith = errno
                    return
                }
                offset += written
            }
        }
        // The extended data goes on before the rename, so that it appears with the data.
        let attached = failedWith == 0 && attribute.map { attribute in
            attribute.withUnsafeBytes { wi_xattr_fset(fd, DiskCache.attributeName, $0.baseAddress, $0.count) } == 0
        } == true
        if close(fd) != 0 && failedWith == 0 { failedWith = errno }
        if failedWith == 0, rename(temporary, destination) != 0 {
            failedWith = errno
            if failedWith == EISDIR || failedWith == ENOTEMPTY || failedWith == EEXIST {
                // A directory stands where the entry goes: it is ours (named by our hash), replace it.
                try? FileManager.default.removeItem(atPath: destination)
                failedWith = rename(temporary, destination) == 0 ? 0 : errno
            }
        }
        if failedWith != 0 {
            unlink(temporary)
            throw failure(failedWith, destination)
        }
        return attached
    }

    private func failure(_ code: Int32, _ path: String) -> Error {
        if code == ENOENT { return POSIXError(.ENOENT) }
        return ImageError.cacheWriteFailed(path: path, reason: String(cString: strerror(code)))
    }

    /// Removes the entry for `key` (and its extended data), under its current name and its
    /// legacy one; an empty key removes nothing.
    public func removeData(forKey key: String) {
        if key.isEmpty { return }
        configuration.hookBeforeIO()
        let name = DiskCache.fileName(forKey: key)
        removeFile(name)
        if let legacy = DiskCache.legacyFileName(forKey: key, current: name) { removeFile(legacy) }
    }

    /// Removes the entry file `name` and its side file; returns why it failed, or nil when the
    /// entry is gone (or was already). The index forgets only entries that are really gone.
    @discardableResult
    private func removeFile(_ name: String) -> RemovalFailure? {
        let file = path(name)
        if let failure = unlinkEntry(file) { return failure }
        let old = index?.removeValue(forKey: name)
        if let old { indexedSize -= old.size }
        // Side files exist only where extended data was kept in one (or the index is unknown).
        if old?.hasSideFile != false { unlink(path(".ext-\(name)")) }
        return nil
    }

    /// Unlinks `file`; a directory standing in an entry's place (ours, by its name) is removed
    /// with its contents. A file that is already gone counts as removed.
    private func unlinkEntry(_ file: String) -> RemovalFailure? {
        if unlink(file) == 0 || errno == ENOENT { return nil }
        var code = errno
        if code == EISDIR || code == EPERM {
            var info = stat()
            if lstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                do {
                    try FileManager.default.removeItem(atPath: file)
                    return nil
                } catch {
                    code = EACCES
                }
            }
        }
        return RemovalFailure(path: file, reason: String(cString: strerror(code)))
    }

    /// Removes every entry, with its extended data and any temporary file, and reports what it
    /// removed and what it could not. The directory itself stays, and so does every file in it
    /// that the cache did not write (see `isCacheFileName`): nothing outside the cache's own
    /// files is ever touched.
    @discardableResult
    public func removeAll() -> CleanupReport {
        configuration.hookBeforeIO()
        var report = CleanupReport(removedCount: 0, removedBytes: 0)
        var names: [(name: String, size: Int)] = []
        let listed = DiskCache.forEachFile(in: directoryPath) { fd, name in
            guard DiskCache.isCacheFileName(name) else { return }
            var info = stat()
            let size = fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : 0
            names.append((name, size))
        }
        if !listed, errno != ENOENT && errno != ENOTDIR && errno != ENAMETOOLONG {
            // A folder that cannot exist holds nothing; one that cannot be read is a failure.
            report.failures.append(RemovalFailure(path: directoryPath, reason: String(cString: strerror(errno))))
        }
        for (name, size) in names {
            if let failure = unlinkEntry(path(name)) {
                report.failures.append(failure)
            } else if !name.hasPrefix(".") {
                report.removedCount += 1
                report.removedBytes += size
            }
        }
        // What could not be removed is still there: the index is rebuilt from the folder.
        index = report.failures.isEmpty ? [:] : nil
        indexedSize = 0
        temporaryBytes = 0
        return report
    }

    // MARK: - Size and cleanup

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
    private func ensureIndex() {
        guard index == nil else { return }
        var entries: [String: Entry] = [:]
        var temporaries: [String: Int] = [:]
        var sideFiles: [String] = []
        var total = 0
        let stale = Date().timeIntervalSince1970 - 3600
        DiskCache.forEachFile(in: directoryPath) { fd, name in
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
    private static func forEachFile(in path: String, _ body: (Int32, String) -> Void) -> Bool {
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

    private func recordAccess(_ name: String) {
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

    // MARK: - Extended data

    private static let attributeName = "user.com.webimage.extended"

    /// Attaches `data` to the entry for `key` (SDWebImage's `setExtendedData`), in an extended
    /// attribute, or in a hidden side file where the file system refuses them. nil removes it.
    /// - Throws: `ImageError.cacheWriteFailed` when there is no entry for `key` or nothing can be written.
    public func setExtendedData(_ data: Data?, forKey key: String) throws {
        if key.isEmpty { return }
        configuration.hookBeforeIO()
        let name = DiskCache.fileName(forKey: key)
        let file = path(name)
        guard isRegularFile(file) else {
            throw ImageError.cacheWriteFailed(path: file, reason: "no cache entry to attach extended data to")
        }
        let side = path(".ext-\(name)")
        guard let data else {
            wi_xattr_remove(file, DiskCache.attributeName)
            unlink(side)
            return
        }
        let status = configuration.usesExtendedAttributes
            ? data.withUnsafeBytes { wi_xattr_set(file, DiskCache.attributeName, $0.baseAddress, $0.count) } : -1
        if status == 0 {
            unlink(side)
            index?[name]?.changed = Date()
            return
        }
        try writeFile(data, to: side)
        ensureIndex()
        index?[name]?.hasSideFile = true
    }

    /// The extended data attached to the entry for `key`, if any.
    public func extendedData(forKey key: String) -> Data? {
        configuration.hookBeforeIO()
        return readExtendedData(forKey: key)
    }

    private func readExtendedData(forKey key: String) -> Data? {
        if key.isEmpty { return nil }
        let name = DiskCache.fileName(forKey: key)
        let file = path(name)
        let size = configuration.usesExtendedAttributes ? wi_xattr_get(file, DiskCache.attributeName, nil, 0) : -1
        if size >= 0 {
            var bytes = [UInt8](repeating: 0, count: size)
            let read = wi_xattr_get(file, DiskCache.attributeName, &bytes, size)
            if read >= 0 { return Data(bytes.prefix(read)) }
        }
        return read(path(".ext-\(name)"))
    }

    // MARK: - Migration

    /// Moves the entries of an old cache directory into this one; where both have an entry the
    /// newer file wins. Returns how many entries moved. The old directory is removed when empty.
    @discardableResult
    public func migrate(from oldDirectory: URL) -> Int {
        configuration.hookBeforeIO()
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: oldDirectory.path), !names.isEmpty else { return 0 }
        try? createDirectory()
        ensureIndex()
        var moved = 0
        for name in names where !name.hasPrefix(".") && DiskCache.isCacheFileName(name) {
            let source = oldDirectory.appendingPathComponent(name)
            let destination = directory.appendingPathComponent(name)
            let sourceDate = (try? source.resourceValues(forKeys: [.contentModificationDateKey]))?.contentModificationDate ?? .distantPast
            if let existing = index?[name], existing.modified >= sourceDate {
                try? fm.removeItem(at: source)
                continue
            }
            if rename(source.path, destination.path) != 0 {
                guard (try? fm.copyItem(at: source, to: destination)) != nil || (try? fm.replaceItemAt(destination, withItemAt: source)) != nil else { continue }
                try? fm.removeItem(at: source)
            }
            let size = (try? destination.resourceValues(forKeys: [.fileSizeKey]))?.fileSize ?? 0
            if let old = index?[name] { indexedSize -= old.size }
            index?[name] = Entry(size: size, modified: sourceDate, accessed: sourceDate, created: Date(), changed: Date())
            indexedSize += size
            moved += 1
        }
        try? fm.removeItem(at: oldDirectory.appendingPathComponent(".DS_Store"))
        if (try? fm.contentsOfDirectory(atPath: oldDirectory.path))?.isEmpty == true { try? fm.removeItem(at: oldDirectory) }
        return moved
    }
}

extension Sequence<UInt8> {
    /// The bytes as lowercase hexadecimal.
    var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

private extension UInt8 {
    /// An ASCII letter.
    var isLetterASCII: Bool { (self | 0x20) >= UInt8(ascii: "a") && (self | 0x20) <= UInt8(ascii: "z") }
}

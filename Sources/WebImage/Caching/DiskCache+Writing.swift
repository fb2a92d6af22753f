import CWebImageSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Writing and removing entries: temporary file, then rename.
extension DiskCache {
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
        namesChanged(added: name)
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
    func writeFile(_ data: Data, to destination: String, attribute: Data? = nil) throws -> Bool {
        do {
            return try writeAtomically(data, to: destination, attribute: attribute)
        } catch let error as POSIXError where error.code == .ENOENT {
            try createDirectory()
            do { return try writeAtomically(data, to: destination, attribute: attribute) } catch let error as POSIXError {
                throw ImageError.cacheWriteFailed(path: destination, reason: String(cString: strerror(error.code.rawValue)))
            }
        }
    }

    func createDirectory() throws {
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
                do throws(SystemCallError) {
                    offset += try systemCall("write") { write(fd, raw.baseAddress! + offset, raw.count - offset) }
                } catch {
                    failedWith = error.code
                    return
                }
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

    func failure(_ code: Int32, _ path: String) -> Error {
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
    func removeFile(_ name: String) -> RemovalFailure? {
        let file = path(name)
        if let failure = unlinkEntry(file) { return failure }
        let old = index?.removeValue(forKey: name)
        if let old { indexedSize -= old.size }
        namesChanged(removed: name)
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
        indexListedFolder = index != nil
        namesChanged(unknown: true)
        indexedSize = 0
        temporaryBytes = 0
        return report
    }
}

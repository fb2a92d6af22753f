import CWebImageSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Extended data beside an entry, and moving entries from an older cache folder.
extension DiskCache {
    static let attributeName = "user.com.webimage.extended"

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

    func readExtendedData(forKey key: String) -> Data? {
        if key.isEmpty { return nil }
        return readExtendedData(name: DiskCache.fileName(forKey: key))
    }

    /// The extended data of the entry file `name` (its key's MD5 name, worked out once by the caller).
    func readExtendedData(name: String) -> Data? {
        let file = path(name)
        if configuration.usesExtendedAttributes {
            // One call for the usual few hundred bytes (the manager's metadata); a larger value
            // is asked its size first.
            let small = withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 1) { buffer -> Data? in
                let read = wi_xattr_get(file, DiskCache.attributeName, buffer.baseAddress, buffer.count)
                return read >= 0 ? Data(buffer.prefix(read)) : nil
            }
            if let small { return small }
            if errno == ERANGE {
                var bytes: [UInt8]
                let size = wi_xattr_get(file, DiskCache.attributeName, nil, 0)
                if size >= 0 {
                    bytes = [UInt8](repeating: 0, count: size)
                    let read = wi_xattr_get(file, DiskCache.attributeName, &bytes, size)
                    if read >= 0 { return Data(bytes.prefix(read)) }
                }
            }
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
        if moved > 0 { namesChanged(unknown: true) }
        try? fm.removeItem(at: oldDirectory.appendingPathComponent(".DS_Store"))
        if (try? fm.contentsOfDirectory(atPath: oldDirectory.path)) == [".generation"] {
            try? fm.removeItem(at: oldDirectory.appendingPathComponent(".generation"))
        }
        if (try? fm.contentsOfDirectory(atPath: oldDirectory.path))?.isEmpty == true { try? fm.removeItem(at: oldDirectory) }
        return moved
    }
}

import CWebImageSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Reading entries: the hot path of a disk hit.
extension DiskCache {
    /// The stored data for `key`, or nil (missing, unreadable, or not a file). Looks in the
    /// additional read-only directories after a miss. An entry under SDWebImage's older name
    /// (the MD5 without the extension, as SDWebImage before 5.x and its extra paths wrote it)
    /// is found too, and moved to the current name in this cache's own folder.
    /// A key the cache knows is absent is answered on the caller's thread, touching nothing.
    public nonisolated(nonsending) func data(forKey key: String) async -> Data? {
        if key.isEmpty { return nil }
        let name = DiskCache.fileName(forKey: key)
        if isKnownAbsent(name) { return nil }
        return await data(forKey: key, name: name)
    }

    private func data(forKey key: String, name: String) -> Data? {
        guard mayHold(name) else { return nil }
        configuration.hookBeforeIO()
        return readData(forKey: key, name: name)
    }

    /// The data and the extended data of `key`'s entry, in one call on the disk thread (as
    /// asked); nil when there is no entry (a key known absent: answered on the caller's thread).
    public nonisolated(nonsending) func entry(forKey key: String, includingData: Bool = true, includingExtendedData: Bool = true) async
        -> (data: Data?, extendedData: Data?)? {
        if key.isEmpty { return nil }
        let name = DiskCache.fileName(forKey: key)
        if isKnownAbsent(name) { return nil }
        return await entry(forKey: key, name: name, includingData: includingData, includingExtendedData: includingExtendedData)
    }

    private func entry(forKey key: String, name: String, includingData: Bool, includingExtendedData: Bool)
        -> (data: Data?, extendedData: Data?)? {
        guard mayHold(name) else { return nil }
        configuration.hookBeforeIO()
        // Both from the entry's own file: its attribute read through the open file (one path
        // lookup for the two); elsewhere (a legacy name, another folder, side files) apart.
        if includingData, includingExtendedData, configuration.usesExtendedAttributes,
           let (data, attribute) = read(path(name), attributeNamed: DiskCache.attributeName) {
            if configuration.expireType == .accessDate { recordAccess(name) }
            return (data, attribute ?? read(path(".ext-\(name)")))
        }
        let data = includingData ? readData(forKey: key, name: name) : nil
        if includingData, data == nil { return nil }
        let extended = includingExtendedData ? readExtendedData(name: name) : nil
        return (data, extended)
    }

    private func readData(forKey key: String, name: String) -> Data? {
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
        // The name is ASCII: its first 32 bytes, cut on the bytes (cutting by characters walks
        // grapheme boundaries on every read).
        let utf8 = current.utf8
        guard utf8.count > 32 else { return nil }
        return String(utf8.prefix(32))
    }

    /// Renames an entry found under its legacy name to the current one (with its side file).
    private func migrateLegacy(_ legacy: String, to name: String) {
        guard rename(path(legacy), path(name)) == 0 else { return }
        rename(path(".ext-\(legacy)"), path(".ext-\(name)"))
        if let entry = index?.removeValue(forKey: legacy) { index?[name] = entry }
        namesChanged(added: name, removed: legacy)
    }

    nonisolated func path(_ name: String) -> String { directoryPath + "/" + name }

    /// The whole file, or nil when it is missing, not a regular file, or unreadable.
    nonisolated func read(_ path: String) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return read(fd)
    }

    /// The whole file and its extended attribute `attribute` when it has one of up to 1 KB
    /// (nil: none, or a larger one, read by path afterwards); nil when the file cannot be read.
    func read(_ path: String, attributeNamed attribute: String) -> (Data, Data?)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let data = read(fd) else { return nil }
        let value = withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 1) { buffer -> Data? in
            let count = wi_xattr_fget(fd, attribute, buffer.baseAddress, buffer.count)
            return count >= 0 ? Data(buffer.prefix(count)) : nil
        }
        if value == nil, errno == ERANGE { return (data, readExtendedData(name: URL(fileURLWithPath: path).lastPathComponent)) }
        return (data, value)
    }

    /// The whole of the open file `fd`, or nil when it is not a regular file or unreadable.
    private nonisolated func read(_ fd: Int32) -> Data? {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        var data = Data(count: Int(info.st_size))
        let complete = data.withUnsafeMutableBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                guard let n = try? systemCall("read", { Glibc.read(fd, raw.baseAddress! + offset, raw.count - offset) }), n > 0 else {
                    return false
                }
                offset += n
            }
            return true
        }
        return complete ? data : nil
    }

    /// Whether an entry for `key` exists (here or in an additional directory).
    public nonisolated(nonsending) func contains(_ key: String) async -> Bool {
        if key.isEmpty { return false }
        let name = DiskCache.fileName(forKey: key)
        if isKnownAbsent(name) { return false }
        return await contains(key, name: name)
    }

    private func contains(_ key: String, name: String) -> Bool {
        if configuration.additionalDirectories.isEmpty, !mayHold(name) { return false }
        configuration.hookBeforeIO()
        if isRegularFile(path(name)) { return true }
        let names = [name] + (DiskCache.legacyFileName(forKey: key, current: name).map { [$0] } ?? [])
        if names.count > 1, isRegularFile(path(names[1])) { return true }
        return configuration.additionalDirectories.contains { directory in names.contains { isRegularFile(directory.path + "/" + $0) } }
    }

    nonisolated func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }
}

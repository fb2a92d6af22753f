import Foundation

// Where a disk cache lives and what its files are named.
extension DiskCache {
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
        var key = key
        // A plain key (the usual image URL) is read from its bytes in place: no array, no path
        // or extension string, on every lookup.
        let plain = key.withUTF8 { bytes -> String? in
            guard let path = plainPathRange(bytes) else { return nil }
            let ext = PathExtension.range(in: bytes, path: path)
            let isPlain = !ext.isEmpty && ext.count <= 255 - 33
                && bytes[ext].allSatisfy { $0.isLetterASCII || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
            return Digest.md5(bytes, suffix: isPlain ? UnsafeBufferPointer(rebasing: bytes[ext]) : nil)
        }
        if let plain { return plain }
        let ext = URLComponents(string: key).map { PathExtension.of($0.path) } ?? PathExtension.of(key)
        // Letters and digits only: bytes, since an ASCII character is one byte and a letter or a
        // digit exactly when that byte is one.
        let isPlain = !ext.isEmpty && ext.utf8.count <= 255 - 33
            && ext.utf8.allSatisfy { $0.isLetterASCII || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
        return Digest.md5(key, suffix: isPlain ? ext : nil)
    }

    /// The path of `key` read as a URL reference, as `URLComponents(string:)` gives it, for keys
    /// made only of characters that need no escaping and no `%` or brackets (the usual image URL);
    /// nil for any other key (`fileName(forKey:)` then asks `URLComponents`, which parses a URL
    /// for every store and read: a fifth of a small store's time on its thread). The string view
    /// of `plainPathRange`, for tests, which compare it with `URLComponents`.
    nonisolated static func plainURLPath(_ key: String) -> String? {
        var key = key
        return key.withUTF8 { bytes in
            plainPathRange(bytes).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
        }
    }

    /// Where `plainURLPath` finds the path in the key's UTF-8 `bytes`: its range, or nil.
    private nonisolated static func plainPathRange(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        var fragments = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                continue
            case UInt8(ascii: "#"):
                fragments += 1
                if fragments > 1 { return nil }
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "/"),
                 UInt8(ascii: "?"), UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"),
                 UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","),
                 UInt8(ascii: ";"), UInt8(ascii: "="):
                continue
            default:
                return nil
            }
        }
        // Up to the query or fragment.
        var start = 0
        let end = bytes.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? bytes.count
        // A scheme: a letter, then letters, digits, "+", "-" or ".", then ":" (before any "/").
        if let colon = bytes[..<end].firstIndex(of: UInt8(ascii: ":")), colon > 0,
           !bytes[..<colon].contains(UInt8(ascii: "/")) {
            let scheme = bytes[..<colon]
            let isScheme = scheme.first!.isLetterASCII && scheme.allSatisfy {
                $0.isLetterASCII || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            }
            guard isScheme else { return nil }
            start = colon + 1
        }
        // An authority after "//" runs to the next "/": a plain host and an optional port of
        // digits only (user information, or anything URLComponents might refuse, is left to it).
        if end - start >= 2, bytes[start] == UInt8(ascii: "/"), bytes[start + 1] == UInt8(ascii: "/") {
            let rest = bytes[(start + 2)..<end]
            let authorityEnd = rest.firstIndex(of: UInt8(ascii: "/")) ?? end
            let authority = bytes[(start + 2)..<authorityEnd]
            let colon = authority.firstIndex(of: UInt8(ascii: ":")) ?? authorityEnd
            let hostIsPlain = bytes[authority.startIndex..<colon].allSatisfy {
                $0.isLetterASCII || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
            }
            let portIsPlain = bytes[colon..<authorityEnd].dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            guard hostIsPlain, portIsPlain else { return nil }
            start = authorityEnd
        }
        return start..<end
    }

    /// Where the entry for `key` lives (whether or not it exists).
    public nonisolated func fileURL(forKey key: String) -> URL {
        directory.appendingPathComponent(DiskCache.fileName(forKey: key))
    }
}

private extension UInt8 {
    /// An ASCII letter.
    var isLetterASCII: Bool { (self | 0x20) >= UInt8(ascii: "a") && (self | 0x20) <= UInt8(ascii: "z") }
}

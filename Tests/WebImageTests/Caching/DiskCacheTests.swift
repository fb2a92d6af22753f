import Foundation
import Testing
@testable import WebImage

@Suite struct DiskCacheTests {
    func payload(_ n: Int, size: Int = 2000) -> Data { Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }) }

    @Test func fileNamesAreMD5PlusThePathExtension() {
        #expect(DiskCache.fileName(forKey: "https://example.com/a/photo.jpg?size=large")
                == "\(md5("https://example.com/a/photo.jpg?size=large")).jpg")
        #expect(DiskCache.fileName(forKey: "no-extension") == md5("no-extension"))
        let longExtension = "file." + String(repeating: "x", count: 300)
        #expect(DiskCache.fileName(forKey: longExtension) == md5(longExtension))
        #expect(DiskCache.fileName(forKey: "a/b.p\u{0}ng") == md5("a/b.p\u{0}ng"))   // unsafe extensions are dropped
        #expect(DiskCache.fileName(forKey: "x").count == 32)
    }

    /// The file name's extension comes from the key's path as `URLComponents` reads it; plain
    /// keys take a byte-level reading instead of parsing a URL. Both readings agree on every key
    /// here (the usual image URLs, and the odd ones that the byte-level reading leaves to
    /// `URLComponents`).
    @Test func thePlainPathReadingAgreesWithURLComponents() {
        let keys = [
            "https://example.com/a/photo.jpg?size=large", "http://host:8080/a.b/c.png#frag", "http://host/", "http://host",
            "https://cdn.example.com/i/x.webp?w=100&h=200#top", "mem:/one-1.jpg", "data:image/png;base64,iVBOR",
            "//host/a.jpg", "no-extension", "key1.jpg", "a/b.c/d", "a:b/c.gif", "file:///tmp/x.jpeg", "k0",
            "https://h/p;params/q.jpg?x=/y.png", "https://h/a.jpg?x=1#y?z", "s3://bucket/key.tiff",
            "1abc:foo.jpg", "http://u@host/a.jpg", "http://host:abc/a.jpg?x=/y.png", "http://[::1]/a.jpg",
            "a#b#c.png", "https://h/%41.jpg", "https://h/a b.jpg", "https://h/é.jpg", "", "?q.jpg", "#f.png",
            "https://h/.hidden", "https://h/a.", "https://h/a.jpg/", "http:/a.jpg", "http:a.jpg",
        ]
        for key in keys {
            let viaComponents = URLComponents(string: key).map { PathExtension.of($0.path) } ?? PathExtension.of(key)
            if let plain = DiskCache.plainURLPath(key) {
                #expect(plain == URLComponents(string: key)?.path, "path of \(key)")
                #expect(PathExtension.of(plain) == viaComponents, "extension of \(key)")
                #expect(PathExtension.ofASCII(plain) == viaComponents, "extension of \(key), read from its bytes")
            }
            // The name built in one string agrees with the digest and the extension put together.
            let ext = viaComponents
            let plainExtension = !ext.isEmpty && ext.utf8.count <= 222 && ext.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            #expect(DiskCache.fileName(forKey: key) == Digest.md5(key) + (plainExtension ? "." + ext : ""), "file name of \(key)")
        }
        for path in ["", "/", "a", "a.b", ".a", "a/.b", "a.b/", "a.b//", "x/y.z.w", "/a./", "a..b"] {
            #expect(PathExtension.ofASCII(path) == PathExtension.of(path), "extension of the path \(path)")
        }
        #expect(DiskCache.plainURLPath("https://example.com/a/photo.jpg?size=large") == "/a/photo.jpg")
        #expect(DiskCache.plainURLPath("https://h/%41.jpg") == nil)
        #expect(DiskCache.plainURLPath("http://u@host/a.jpg") == nil)
    }

    /// MD5s computed independently (Python's hashlib), so that the names are checked against
    /// another implementation than the one under test.
    func md5(_ key: String) -> String {
        let known = [
            "https://example.com/a/photo.jpg?size=large": "d32c53c292683622a4bc21744260e72b",
            "no-extension": "1e3d480cd384a6811c868e87e8773908",
            "file." + String(repeating: "x", count: 300): "3512de4fab4337d5cee0f6bf3aa00ca3",
            "a/b.p\u{0}ng": "930b16cf0fb5a89bbe09d29141f722be",
        ]
        return known[key] ?? "unknown test vector"
    }

    @Test func digestsMatchKnownVectors() {
        #expect(Digest.md5("") == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(Digest.md5(Data("abc".utf8)) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(Digest.sha256(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// Two cache objects on one folder (two processes, or two managers in one) write the same
    /// keys at once: their temporary names never meet, every entry is whole, none is left over.
    @Test func twoCachesOnOneFolderWriteTheSameKeysAtOnce() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let first = DiskCache(directory: dir.url), second = DiskCache(directory: dir.url)
        let failures = await withTaskGroup(of: Int.self) { group in
            for n in 0..<200 {
                group.addTask { (try? await first.store(self.payload(n), forKey: "k\(n % 50)")) == nil ? 1 : 0 }
                group.addTask { (try? await second.store(self.payload(n), forKey: "k\(n % 50)")) == nil ? 1 : 0 }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
        for key in 0..<50 {
            let data = await first.data(forKey: "k\(key)")
            #expect(data.map { data in (0..<200).contains { data == payload($0) } } == true, "entry k\(key) is one whole store")
        }
        #expect(!dir.names.contains { $0.hasPrefix(".tmp-") })
        #expect(dir.names.count == 50)
    }

    @Test func storeReadRemoveAndCount() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = DiskCache(directory: dir.url.appendingPathComponent("nested/cache"))  // created on first write
        #expect(await cache.data(forKey: "k") == nil)
        try await cache.store(payload(1), forKey: "k")
        try await cache.store(payload(2, size: 500), forKey: "k2.png")
        #expect(await cache.data(forKey: "k") == payload(1))
        #expect(await cache.contains("k2.png"))
        #expect(await cache.count() == 2)
        #expect(await cache.totalSize() == 2500)
        await cache.removeData(forKey: "k")
        #expect(await cache.data(forKey: "k") == nil)
        #expect(await cache.count() == 1)
        #expect(await cache.totalSize() == 500)
        await cache.removeAll()
        #expect(await cache.count() == 0)
        #expect(!FileManager.default.fileExists(atPath: cache.fileURL(forKey: "k2.png").path))
    }

    @Test func writesAreAtomicAndLeaveNoTemporaryFiles() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = DiskCache(directory: dir.url)
        for i in 0..<20 { try await cache.store(payload(i), forKey: "key\(i)") }
        #expect(dir.names.count == 20)
        #expect(!dir.names.contains { $0.hasPrefix(".") })
        // A temporary file left by a crash an hour ago is removed when the index is built.
        let stale = dir.url.appendingPathComponent(".tmp-crashed")
        try Data([1, 2, 3]).write(to: stale)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: stale.path)
        let fresh = DiskCache(directory: dir.url)
        #expect(await fresh.count() == 20)
        #expect(!FileManager.default.fileExists(atPath: stale.path))
    }

    func age(_ cache: DiskCache, key: String, seconds: TimeInterval) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-seconds)],
                                              ofItemAtPath: cache.fileURL(forKey: key).path)
    }

    @Test func cleanupRemovesEntriesOlderThanMaxAge() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let writer = DiskCache(directory: dir.url)
        for key in ["old1", "old2", "new"] { try await writer.store(payload(0), forKey: key) }
        try age(writer, key: "old1", seconds: 8 * 86400)
        try age(writer, key: "old2", seconds: 30 * 86400)
        let cache = DiskCache(directory: dir.url)   // default max age: 7 days
        let report = await cache.removeExpiredData()
        #expect(report == DiskCache.CleanupReport(removedCount: 2, removedBytes: 4000))
        #expect(await cache.contains("new"))
        #expect(await !cache.contains("old1"))
    }

    @Test func cleanupTrimsOldestFirstToHalfTheSizeLimit() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let writer = DiskCache(directory: dir.url)
        for i in 0..<10 {
            try await writer.store(payload(i, size: 1000), forKey: "k\(i)")
            try age(writer, key: "k\(i)", seconds: Double(100 - i))   // k0 oldest
        }
        let cache = DiskCache(directory: dir.url, configuration: .init(maxSize: 8000))
        #expect(await cache.totalSize() == 10_000)
        await cache.removeExpiredData()
        #expect(await cache.totalSize() == 4000)
        for i in 0..<6 { #expect(await !cache.contains("k\(i)")) }
        for i in 6..<10 { #expect(await cache.contains("k\(i)")) }
        // A store that goes over the limit trims by itself.
        for i in 10..<15 { try await cache.store(payload(i, size: 1000), forKey: "k\(i)") }
        #expect(await cache.totalSize() <= 8000)
    }

    @Test func cleanupAlsoRunsOnATimer() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = DiskCache(directory: dir.url, configuration: .init(maxAge: .milliseconds(100), cleanupInterval: .milliseconds(50)))
        try await cache.store(payload(1), forKey: "short-lived")
        #expect(await cache.contains("short-lived"))
        for _ in 0..<100 where await cache.contains("short-lived") { try await Task.sleep(for: .milliseconds(20)) }
        #expect(await !cache.contains("short-lived"))
    }

    @Test func accessDateExpiryCountsReads() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let writer = DiskCache(directory: dir.url)
        for key in ["read", "unread"] {
            try await writer.store(payload(0), forKey: key)
            try age(writer, key: key, seconds: 10 * 86400)
        }
        let cache = DiskCache(directory: dir.url, configuration: .init(expireType: .accessDate))
        _ = await cache.count()                              // index built from the old dates
        #expect(await cache.data(forKey: "read") != nil)     // a read makes it fresh
        await cache.removeExpiredData()
        #expect(await cache.contains("read"))
        #expect(await !cache.contains("unread"))
    }

    @Test(arguments: [true, false])
    func extendedDataInAttributesOrSideFiles(attributes: Bool) async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = DiskCache(directory: dir.url, configuration: .init(usesExtendedAttributes: attributes))
        try await cache.store(payload(1), forKey: "k")
        try await cache.setExtendedData(Data("meta".utf8), forKey: "k")
        #expect(await cache.extendedData(forKey: "k") == Data("meta".utf8))
        #expect(await cache.data(forKey: "k") == payload(1))   // the entry itself is untouched
        #expect(await cache.count() == 1)
        try await cache.setExtendedData(nil, forKey: "k")
        #expect(await cache.extendedData(forKey: "k") == nil)
        await #expect(throws: ImageError.self) { try await cache.setExtendedData(Data([1]), forKey: "missing") }
    }

    @Test func additionalDirectoriesAreReadOnlyFallbacks() async throws {
        let main = TemporaryDirectory(), extra = TemporaryDirectory()
        defer { main.remove(); extra.remove() }
        try payload(9).write(to: extra.url.appendingPathComponent(DiskCache.fileName(forKey: "prepopulated.jpg")))
        let cache = DiskCache(directory: main.url, configuration: .init(additionalDirectories: [extra.url]))
        #expect(await cache.data(forKey: "prepopulated.jpg") == payload(9))
        #expect(await cache.contains("prepopulated.jpg"))
        #expect(await cache.count() == 0)   // not one of ours
    }

    @Test func migrationMovesEntriesAndKeepsTheNewerFile() async throws {
        let old = TemporaryDirectory(), new = TemporaryDirectory()
        defer { old.remove(); new.remove() }
        let oldCache = DiskCache(directory: old.url)
        try await oldCache.store(payload(1), forKey: "only-old")
        try await oldCache.store(payload(2), forKey: "both")
        try age(oldCache, key: "both", seconds: 1000)
        let cache = DiskCache(directory: new.url)
        try await cache.store(payload(3), forKey: "both")
        #expect(await cache.migrate(from: old.url) == 1)
        #expect(await cache.data(forKey: "only-old") == payload(1))
        #expect(await cache.data(forKey: "both") == payload(3))
        #expect(!FileManager.default.fileExists(atPath: old.url.path))
    }

    @Test func hostileKeysStayInsideTheDirectory() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = DiskCache(directory: dir.url)
        let keys = ["../../etc/passwd", "/absolute/path.png", "a/b/c", "nul\u{0}inside", String(repeating: "k", count: 10_000),
                    "..", ".", "emoji-🖼️.webp"]   // "" is no key at all (PeerCachingBehaviourTests)
        for (i, key) in keys.enumerated() { try await cache.store(payload(i), forKey: key) }
        for (i, key) in keys.enumerated() { #expect(await cache.data(forKey: key) == payload(i), "\(key.prefix(20))") }
        #expect(dir.names.count == keys.count)
        #expect(dir.names.allSatisfy { !$0.contains("/") && $0.utf8.count <= 255 })
    }

    @Test func missingDirectoryIsRecreatedAndUnusableOneFailsClearly() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = DiskCache(directory: dir.url.appendingPathComponent("c"))
        try await cache.store(payload(1), forKey: "a")
        try FileManager.default.removeItem(at: dir.url.appendingPathComponent("c"))
        try await cache.store(payload(2), forKey: "b")       // recreated
        #expect(await cache.data(forKey: "b") == payload(2))
        // A directory that cannot exist (its parent is a file).
        let blocker = dir.url.appendingPathComponent("file")
        try Data([0]).write(to: blocker)
        let broken = DiskCache(directory: blocker.appendingPathComponent("cache"))
        await #expect(throws: ImageError.self) { try await broken.store(payload(1), forKey: "a") }
        #expect(await broken.data(forKey: "a") == nil)
        #expect(await broken.count() == 0)
    }

    @Test func directoryWhereAnEntryShouldBe() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = DiskCache(directory: dir.url)
        let url = cache.fileURL(forKey: "k.png")
        try FileManager.default.createDirectory(at: url.appendingPathComponent("inner"), withIntermediateDirectories: true)
        #expect(await cache.data(forKey: "k.png") == nil)
        #expect(await !cache.contains("k.png"))
        try await cache.store(payload(5), forKey: "k.png")
        #expect(await cache.data(forKey: "k.png") == payload(5))
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tiny tmpfs needs root (CI runs as root)"))
    func fullDiskReportsAnErrorAndEarlierEntriesSurvive() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        guard mount("tmpfs", dir.url.path, "tmpfs", 0, "size=64k") == 0 else {
            Issue.record("could not mount a tmpfs: errno \(errno)")
            return
        }
        defer { umount(dir.url.path) }
        let cache = DiskCache(directory: dir.url)
        try await cache.store(payload(1, size: 20_000), forKey: "first")
        await #expect(throws: ImageError.self) { try await cache.store(payload(2, size: 100_000), forKey: "too-big") }
        #expect(await cache.data(forKey: "first") == payload(1, size: 20_000))
        #expect(await cache.data(forKey: "too-big") == nil)
        #expect(!dir.names.contains { $0.hasPrefix(".tmp-") })
        // Replacing an entry on a full disk keeps the old one whole.
        await #expect(throws: ImageError.self) { try await cache.store(payload(3, size: 100_000), forKey: "first") }
        #expect(await cache.data(forKey: "first") == payload(1, size: 20_000))
    }

    @Test func twoCachesOnOneDirectory() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let a = DiskCache(directory: dir.url), b = DiskCache(directory: dir.url)
        try await a.store(payload(1), forKey: "from-a")
        try await b.store(payload(2), forKey: "from-b")
        #expect(await b.data(forKey: "from-a") == payload(1))
        #expect(await a.data(forKey: "from-b") == payload(2))
        await a.removeData(forKey: "from-b")
        #expect(await b.data(forKey: "from-b") == nil)
    }

    @Test func concurrentStoreQueryRemoveOfOneKey() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = DiskCache(directory: dir.url)
        let payloads = (0..<100).map { payload($0, size: 4096) }
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<100 {
                group.addTask {
                    switch i % 3 {
                    case 0: try? await cache.store(payloads[i], forKey: "shared")
                    case 1:
                        if let data = await cache.data(forKey: "shared") { #expect(payloads.contains(data), "torn read") }
                    default: await cache.removeData(forKey: "shared")
                    }
                }
            }
        }
        try await cache.store(payloads[99], forKey: "shared")
        #expect(await cache.data(forKey: "shared") == payloads[99])
        #expect(!dir.names.contains { $0.hasPrefix(".tmp-") })
    }
}

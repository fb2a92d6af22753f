import Foundation
import Testing
@testable import WebImage

/// Namespaces name one folder inside `com.webimage.cache`; no cache operation removes anything
/// outside its own files (the `webimage cache clear --namespace ..` data-loss bug).
@Suite struct CacheNamespaceTests {
    static let hostile = ["..", ".", "", "../victim", "../../", "/", "/etc", "a/../../b", ".hidden", "nul\u{0}inside",
                          "back\\slash", "%2E%2E", "%", String(repeating: "n", count: 300), "tab\there"]

    @Test(arguments: hostile)
    func hostileNamespacesAreRejectedWithAReason(_ namespace: String) {
        if namespace == "%2E%2E" || namespace == "%" {
            // Plain names (no separator, no leading dot): allowed, and escaped so they cannot collide.
            #expect(throws: Never.self) { try ImageCache.validate(namespace: namespace) }
            return
        }
        do {
            try ImageCache.validate(namespace: namespace)
            Issue.record("\(namespace.debugDescription) was accepted")
        } catch {
            guard case .invalidNamespace(let name, let reason) = error else { Issue.record("\(error)"); return }
            #expect(name == namespace && !reason.isEmpty)
            #expect(error.description.hasSuffix(".") && !error.description.hasSuffix(".."))
        }
    }

    @Test func plainNamesAreAccepted() throws {
        for name in ["default", "cli", "my-app_2", "avatars.v2", "émoji-🖼️"] { try ImageCache.validate(namespace: name) }
    }

    @Test func everyNamespaceIsOneFolderInsideTheCacheRoot() {
        let base = TemporaryDirectory(); defer { base.remove() }
        var folders: Set<String> = []
        for namespace in Self.hostile + ["default", "%2E.", "%25"] {
            let url = DiskCache.defaultDirectory(namespace: namespace, environment: ["XDG_CACHE_HOME": base.url.path])
            #expect(url.deletingLastPathComponent().path == base.url.appendingPathComponent("com.webimage.cache").path,
                    "\(namespace.debugDescription) -> \(url.path)")
            let name = url.lastPathComponent
            #expect(!name.isEmpty && !name.hasPrefix(".") && !name.contains("/") && !name.contains("\u{0}"))
            folders.insert(name)
        }
        #expect(folders.count == Self.hostile.count + 3, "distinct namespaces get distinct folders")
        #expect(DiskCache.defaultDirectory(namespace: "default", environment: ["XDG_CACHE_HOME": base.url.path]).lastPathComponent == "default")
    }

    @Test func relativeXDGCacheHomeIsIgnored() {
        let url = DiskCache.defaultDirectory(namespace: "x", environment: ["XDG_CACHE_HOME": "relative/cache", "HOME": "/home/someone"])
        #expect(url.path == "/home/someone/.cache/com.webimage.cache/x")
        let empty = DiskCache.defaultDirectory(namespace: "x", environment: ["XDG_CACHE_HOME": "", "HOME": "/home/someone"])
        #expect(empty.path == "/home/someone/.cache/com.webimage.cache/x")
    }

    /// Plants files beside and above the cache, and in other namespaces; clears every hostile
    /// namespace; every planted file is still there.
    @Test func clearingAnyNamespaceLeavesEverythingElseAlone() async throws {
        let root = TemporaryDirectory(); defer { root.remove() }
        let xdg = root.url.appendingPathComponent("xdg")
        let cacheLookingName = String(repeating: "a", count: 32) + ".png"
        let planted = [
            root.url.appendingPathComponent("above.txt"),
            xdg.appendingPathComponent("other-program/\(cacheLookingName)"),
            xdg.appendingPathComponent("com.webimage.cache/other/\(cacheLookingName)"),
            xdg.appendingPathComponent("com.webimage.cache/\(cacheLookingName)"),
            xdg.appendingPathComponent("com.webimage.cache/default/notes.txt"),
        ]
        for file in planted {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("keep".utf8).write(to: file)
        }
        for namespace in Self.hostile {
            let disk = DiskCache(directory: DiskCache.defaultDirectory(namespace: namespace, environment: ["XDG_CACHE_HOME": xdg.path]))
            let report = await disk.removeAll()
            #expect(report.removedCount == 0 && report.succeeded, "\(namespace.debugDescription): \(report)")
            _ = await disk.removeExpiredData()
        }
        for file in planted { #expect(FileManager.default.fileExists(atPath: file.path), "\(file.path) was removed") }
    }

    @Test func clearRemovesOnlyTheCachesOwnFilesAndSaysWhatItRemoved() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = DiskCache(directory: dir.url)
        try await cache.store(Data(count: 100), forKey: "a.png")
        try await cache.store(Data(count: 50), forKey: "b")
        try await cache.setExtendedData(Data("x".utf8), forKey: "b")
        let foreign = ["README", "photo.jpg", String(repeating: "g", count: 32), ".profile"]
        for name in foreign { try Data("keep".utf8).write(to: dir.url.appendingPathComponent(name)) }
        try FileManager.default.createDirectory(at: dir.url.appendingPathComponent("subfolder"), withIntermediateDirectories: true)
        #expect(await cache.count() == 2, "foreign files are not entries")
        let report = await cache.removeAll()
        #expect(report == DiskCache.CleanupReport(removedCount: 2, removedBytes: 150))
        #expect(Set(dir.names) == Set(foreign + ["subfolder"]))
        // Expiry does not touch foreign files either, however old.
        for name in foreign {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 0)],
                                                  ofItemAtPath: dir.url.appendingPathComponent(name).path)
        }
        #expect(await DiskCache(directory: dir.url).removeExpiredData().removedCount == 0)
        #expect(Set(dir.names) == Set(foreign + ["subfolder"]))
    }

    @Test func cacheFileNamesAreRecognised() {
        #expect(DiskCache.isCacheFileName(DiskCache.fileName(forKey: "https://x/a.png")))
        #expect(DiskCache.isCacheFileName(DiskCache.fileName(forKey: "no extension")))
        #expect(DiskCache.isCacheFileName(".tmp-1234"))
        #expect(DiskCache.isCacheFileName(".ext-" + DiskCache.fileName(forKey: "k")))
        for name in ["README", ".profile", "d41d8cd98f00b204e9800998ecf8427", "D41D8CD98F00B204E9800998ECF8427E",
                     "d41d8cd98f00b204e9800998ecf8427e.", "d41d8cd98f00b204e9800998ecf8427e.p-g", "d41d8cd98f00b204e9800998ecf8427ex",
                     ".ext-README", ".tmp-"] {
            #expect(!DiskCache.isCacheFileName(name), "\(name)")
        }
    }
}

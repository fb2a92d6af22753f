import Foundation
import Testing
@testable import WebImage

/// Caching behaviours that SDWebImage's own tests expect: empty keys, animations stored without
/// data, entries under SDWebImage's older file names, and the four expiry dates.
@Suite struct PeerCachingBehaviourTests {
    static let png = try! Image(bitmap: Fixtures.gradient(width: 16, height: 16)).encoded(as: .png)

    @Test func anEmptyKeyIsANoOpEverywhere() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = ImageCache(namespace: "e", directory: dir.url, config: .init(cleanupInterval: nil))
        let image = try Image(data: Self.png)
        try await cache.store(image, data: Self.png, forKey: "", to: .all)
        #expect(dir.names.isEmpty, "nothing is written for an empty key: \(dir.names)")
        #expect(await cache.image(forKey: "") == nil)
        #expect(await cache.containsImage(forKey: "", in: .all) == .none)
        #expect(cache.memoryCache!.count == 0)
        cache.memory.setImage(image, forKey: "")
        let emptyHit = cache.memory.image(forKey: "")
        #expect(cache.memoryCache!.count == 0 && emptyHit == nil)
        try await cache.disk.store(Self.png, forKey: "")
        #expect(dir.names.isEmpty)
        // Another entry survives removing the empty key.
        try await cache.store(image, data: Self.png, forKey: "k", to: .all)
        await cache.removeImage(forKey: "", from: .all)
        #expect(await cache.containsImage(forKey: "k", in: .all) == .all)
    }

    @Test func anAnimationStoredWithoutDataKeepsItsFrames() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = ImageCache(namespace: "a", directory: dir.url, config: .init(cleanupInterval: nil))
        let frames = (0..<3).map { i in ImageFrame(bitmap: Fixtures.gradient(width: 24, height: 24, opaque: i != 1), duration: 0.1) }
        for format in [ImageFormat.unknown, .jpeg, .gif, .webp, .png] {
            let key = "anim-\(format)"
            try await cache.store(Image(frames: frames, loopCount: 0, format: format), data: nil, forKey: key, to: .disk)
            let data = try #require(await cache.disk.data(forKey: key))
            let decoded = try Image(data: data)
            #expect(decoded.frameCount == 3, "\(format): stored as \(decoded.format) with \(decoded.frameCount) frame(s)")
            #expect(decoded.format == ([.webp, .png].contains(format) ? format : .gif))
        }
    }

    @Test func entriesUnderSDWebImagesOlderNamesAreFoundAndMoved() async throws {
        let dir = TemporaryDirectory(), extra = TemporaryDirectory()
        defer { dir.remove(); extra.remove() }
        let key = "https://example.com/images/photo.png"
        let current = DiskCache.fileName(forKey: key)
        let legacy = String(current.prefix(32))
        #expect(current == legacy + ".png")
        // Written the old way: the bare MD5.
        try Self.png.write(to: dir.url.appendingPathComponent(legacy))
        let cache = DiskCache(directory: dir.url, configuration: .init(cleanupInterval: nil, additionalDirectories: [extra.url]))
        #expect(await cache.contains(key))
        #expect(await cache.data(forKey: key) == Self.png)
        #expect(dir.names == [current], "moved to the current name: \(dir.names)")
        #expect(await cache.count() == 1)
        #expect(await cache.data(forKey: key) == Self.png)
        // In a read-only extra folder (SDWebImage's extra paths) the old name is read in place.
        let other = "https://example.com/other.jpg"
        try Self.png.write(to: extra.url.appendingPathComponent(String(DiskCache.fileName(forKey: other).prefix(32))))
        #expect(await cache.data(forKey: other) == Self.png)
        #expect(extra.names.count == 1)
        // Removing a key removes an entry under either name.
        try Self.png.write(to: dir.url.appendingPathComponent(legacy))
        await cache.removeData(forKey: key)
        #expect(dir.names.isEmpty)
    }

    /// Ages entries by each of SDWebImage's four `SDImageCacheConfigExpireType`s. Dates that
    /// cannot be set by hand (birth and change times) are made by waiting past a short max age;
    /// each type gets a folder of its own with the same three entries.
    @Test func expiryByModificationAccessCreationAndChangeDate() async throws {
        let root = TemporaryDirectory(); defer { root.remove() }
        let types: [DiskCache.ExpireType] = [.modificationDate, .accessDate, .creationDate, .changeDate]
        var writers: [DiskCache] = []
        for index in types.indices {
            let writer = DiskCache(directory: root.url.appendingPathComponent("\(index)"), configuration: .init(cleanupInterval: nil))
            for key in ["old", "touched", "tagged"] { try await writer.store(Self.png, forKey: key) }
            writers.append(writer)
        }
        try await Task.sleep(for: .milliseconds(1300))
        for writer in writers {
            // "touched": modification date set to now (its change date moves too, its birth does not).
            try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: writer.fileURL(forKey: "touched").path)
            // "tagged": extended data attached (change date now; modification and birth untouched).
            try await writer.setExtendedData(Data("x".utf8), forKey: "tagged")
        }
        let recordsBirth = DiskCache.birthTime(ofFile: writers[0].fileURL(forKey: "old").path) != nil
        var survivors: [Set<String>] = []
        for (index, type) in types.enumerated() {
            let cache = DiskCache(directory: writers[index].directory, configuration: .init(maxAge: .seconds(1), expireType: type, cleanupInterval: nil))
            // Access dates are recorded by the cache itself on reads.
            if type == .accessDate { _ = await cache.data(forKey: "old") }
            _ = await cache.removeExpiredData()
            var left: Set<String> = []
            for key in ["old", "touched", "tagged"] where await cache.contains(key) { left.insert(key) }
            survivors.append(left)
        }
        #expect(survivors[0] == ["touched"], "modification date")
        #expect(survivors[1] == ["old", "touched"], "access date (an mtime newer than the atime counts as an access)")
        #expect(survivors[2] == (recordsBirth ? [] : ["touched"]), recordsBirth ? "every file was born 1.3 s ago" : "no birth times: modification date")
        #expect(survivors[3] == ["touched", "tagged"], "change date")
    }
}

/// Temporary files of writers that died mid-write (SIGKILL) are removed when a cache opens and
/// by cleanup, and counted in the size until then.
@Suite struct OrphanedTemporaryFileTests {
    @Test func deadWritersTemporaryFilesGoWhenTheCacheOpensAndLiveOnesCount() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        // A process id that does not exist here.
        var dead: pid_t = 999_999
        while kill(dead, 0) == 0 || errno != ESRCH { dead -= 1 }
        let files = [(".tmp-\(dead)-A1B2", 1000), (".tmp-\(getpid())-C3D4", 500), (".tmp-\(dead)-E5F6", 300)]
        for (name, size) in files { try Data(count: size).write(to: dir.url.appendingPathComponent(name)) }
        let writer = DiskCache(directory: dir.url, configuration: .init(cleanupInterval: nil))
        try await writer.store(Data(count: 200), forKey: "k")
        let cache = DiskCache(directory: dir.url, configuration: .init(cleanupInterval: nil))
        #expect(await cache.count() == 1)
        #expect(await cache.totalSize() == 200 + 500, "a live writer's temporary file counts; the dead ones' are gone")
        #expect(!dir.names.contains { $0.contains("-\(dead)-") || $0.hasSuffix("A1B2") || $0.hasSuffix("E5F6") }, "\(dir.names)")
        // An hour later even a live-looking one is an orphan: cleanup removes it.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)],
                                              ofItemAtPath: dir.url.appendingPathComponent(".tmp-\(getpid())-C3D4").path)
        _ = await cache.removeExpiredData()
        #expect(await cache.totalSize() == 200)
        #expect(dir.names == [DiskCache.fileName(forKey: "k")])
        // Writes name their temporary files after the writing process.
        #expect(DiskCache.isOrphaned(temporary: ".tmp-\(getpid())-X", modified: Date().timeIntervalSince1970, staleBefore: 0) == false)
        #expect(DiskCache.isOrphaned(temporary: ".tmp-\(dead)-X", modified: Date().timeIntervalSince1970, staleBefore: 0) == true)
        #expect(DiskCache.isOrphaned(temporary: ".tmp-legacy-uuid", modified: Date().timeIntervalSince1970, staleBefore: 0) == false)
    }

    @Test func aDeadWritersTemporaryFileAlsoGoesAtCleanupOfAnOpenCache() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = DiskCache(directory: dir.url, configuration: .init(cleanupInterval: nil))
        try await cache.store(Data(count: 100), forKey: "k")   // the index is built
        var dead: pid_t = 999_998
        while kill(dead, 0) == 0 || errno != ESRCH { dead -= 1 }
        try Data(count: 4000).write(to: dir.url.appendingPathComponent(".tmp-\(dead)-late"))
        _ = await cache.removeExpiredData()
        #expect(dir.names == [DiskCache.fileName(forKey: "k")])
        #expect(await cache.totalSize() == 100)
    }
}

import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import WebImage

/// A PNG coder that counts its decodes.
final class CountingCoder: ImageCoder {
    let decodes = Atomic<Int>(0)
    func canDecode(_ data: Data) -> Bool { PNGCoder().canDecode(data) }
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        decodes.add(1, ordering: .relaxed)
        return try PNGCoder().decode(data, options: options)
    }
    func canEncode(_ format: ImageFormat) -> Bool { PNGCoder().canEncode(format) }
    func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        try PNGCoder().encode(image, as: format, options: options)
    }
}

@Suite struct ImageCacheTests {
    let png = try! Image(bitmap: Fixtures.gradient(width: 32, height: 32)).encoded(as: .png)

    func makeCache(_ dir: TemporaryDirectory, config: ImageCacheConfig = .init()) -> ImageCache {
        ImageCache(namespace: "test", directory: dir.url, config: config)
    }

    @Test func queryLooksInMemoryThenDiskAndPromotesDiskHits() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = makeCache(dir)
        #expect(await cache.image(forKey: "k") == nil)
        try await cache.store(nil, data: png, forKey: "k", to: .disk)
        #expect(await cache.containsImage(forKey: "k") == .disk)
        let first = try #require(await cache.image(forKey: "k"))
        #expect(first.cacheType == .disk && first.data == png)
        #expect(await cache.containsImage(forKey: "k") == .all)
        let second = try #require(await cache.image(forKey: "k"))
        #expect(second.cacheType == .memory && second.data == nil)
        #expect(second.image.bitmap == first.image.bitmap)
        let withData = try #require(await cache.image(forKey: "k", includingData: true))
        #expect(withData.cacheType == .memory && withData.data == png)
        #expect(await cache.image(forKey: "k", from: .disk)?.cacheType == .disk)
    }

    @Test func storeHonoursTheCacheType() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = makeCache(dir)
        let image = try Image(data: png)
        try await cache.store(image, data: png, forKey: "m", to: .memory)
        try await cache.store(image, data: png, forKey: "d", to: .disk)
        try await cache.store(image, data: png, forKey: "a", to: .all)
        try await cache.store(image, data: png, forKey: "n", to: .none)
        #expect(await cache.containsImage(forKey: "m") == .memory)
        #expect(await cache.containsImage(forKey: "d") == .disk)
        #expect(await cache.containsImage(forKey: "a") == .all)
        #expect(await cache.containsImage(forKey: "n") == ImageCacheType.none)
        await cache.removeImage(forKey: "a", from: .memory)
        #expect(await cache.containsImage(forKey: "a") == .disk)
        await cache.clearDisk()
        #expect(await cache.containsImage(forKey: "m") == .memory)
        await cache.clearMemory()
        #expect(await cache.containsImage(forKey: "m") == ImageCacheType.none)
    }

    @Test func imagesWithoutDataAreEncodedInTheirFormatOrPNGOrJPEG() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = makeCache(dir)
        let gif = try Image(data: try Corpus.data("gif/chi.gif"))
        try await cache.store(gif, data: nil, forKey: "gif", to: .disk)
        try await cache.store(Image(bitmap: Fixtures.gradient(width: 8, height: 8)), data: nil, forKey: "alpha", to: .disk)
        try await cache.store(Image(bitmap: Fixtures.gradient(width: 8, height: 8, opaque: true)), data: nil, forKey: "opaque", to: .disk)
        func format(_ key: String) async -> ImageFormat? { await cache.disk.data(forKey: key).map { ImageFormat(sniffing: $0) } }
        #expect(await format("gif") == .gif)
        #expect(await format("alpha") == .png)
        #expect(await format("opaque") == .jpeg)
    }

    @Test func corruptOrTruncatedEntriesAreMissesAndDeleted() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = makeCache(dir)
        try await cache.store(nil, data: Data("not an image".utf8), forKey: "text", to: .disk)
        try await cache.store(nil, data: png.prefix(png.count / 2), forKey: "cut", to: .disk)
        #expect(await cache.image(forKey: "text") == nil)
        #expect(await cache.image(forKey: "cut") == nil)
        #expect(await cache.containsImage(forKey: "text") == ImageCacheType.none)
        #expect(await cache.containsImage(forKey: "cut") == ImageCacheType.none)
    }

    @Test func concurrentQueriesShareOneReadAndDecode() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let coder = CountingCoder()
        let disk = DiskCache(directory: dir.url, configuration: .init(ioHook: { usleep(20_000) }))
        let cache = ImageCache(memory: MemoryCache(), disk: disk, config: .init(shouldCacheImagesInMemory: false),
                               coders: ImageCoders([coder]))
        try await disk.store(png, forKey: "k")
        let results = await withTaskGroup(of: ImageCacheResult?.self) { group in
            for _ in 0..<20 { group.addTask { await cache.image(forKey: "k") } }
            return await group.reduce(into: [ImageCacheResult?]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0?.cacheType == .disk })
        #expect(coder.decodes.load(ordering: .relaxed) == 1)
    }

    /// A disk query shared by callers who all leave is cancelled: each returns at once with a
    /// miss, the decode does not run, and a later query starts afresh.
    @Test func aDiskQueryWhoseCallersLeaveIsCancelled() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let coder = CountingCoder()
        let disk = DiskCache(directory: dir.url, configuration: .init(ioHook: { usleep(300_000) }))
        let cache = ImageCache(memory: MemoryCache(), disk: disk, config: .init(shouldCacheImagesInMemory: false),
                               coders: ImageCoders([coder]))
        try await disk.store(png, forKey: "k")
        let clock = ContinuousClock(), start = clock.now
        let queries = (0..<3).map { _ in Task { await cache.image(forKey: "k") } }
        try await Task.sleep(for: .milliseconds(50))
        for query in queries { query.cancel() }
        for query in queries { #expect(await query.value == nil) }
        #expect(clock.now - start < .milliseconds(250), "the callers waited for the read")
        try await Task.sleep(for: .milliseconds(400))
        #expect(coder.decodes.load(ordering: .relaxed) == 0, "the abandoned query decoded")
        #expect(await cache.image(forKey: "k")?.cacheType == .disk)
        #expect(coder.decodes.load(ordering: .relaxed) == 1)
    }

    @Test func slowDiskNeverDelaysAMemoryHit() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        // Four disk caches, each blocking 300 ms per file operation, beside a memory hit. (The
        // proof that file I/O is off the pool is the thread test below: on Linux, libdispatch
        // adds threads when pool threads block, so latency alone cannot show it.)
        let slowCaches = (0..<4).map { i in
            ImageCache(memory: MemoryCache(), disk: DiskCache(directory: dir.url.appendingPathComponent("slow\(i)"),
                                                              configuration: .init(ioHook: { usleep(300_000) })))
        }
        let cache = ImageCache(namespace: "fast", directory: dir.url.appendingPathComponent("fast"))
        try await cache.store(Image(data: png), data: nil, forKey: "hot", to: .memory)
        let slow = Task {
            await withTaskGroup(of: Void.self) { group in
                for slowCache in slowCaches {
                    for i in 0..<2 { group.addTask { _ = await slowCache.image(forKey: "cold\(i)") } }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        let clock = ContinuousClock()
        var hits = 0
        let elapsed = await clock.measure {
            for _ in 0..<100 { if await cache.image(forKey: "hot", from: .memory) != nil { hits += 1 } }
        }
        #expect(hits == 100)
        #expect(elapsed < .milliseconds(250), "memory hits took \(elapsed) beside blocked disks")
        await slow.value
    }

    @Test func everyFileOperationRunsOnTheDiskCachesOwnThread() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let threads = Mutex<[String]>([])
        let disk = DiskCache(directory: dir.url, configuration: .init(ioHook: {
            let name = ThreadExecutor.currentName ?? "not an executor thread"
            // The name the system shows (top -H, perf): at most 15 bytes, or Linux refuses it.
            let system = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            threads.withLock { $0.append(name + " / " + system.trimmingCharacters(in: .newlines)) }
        }))
        let cache = ImageCache(memory: MemoryCache(), disk: disk)
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<16 {
                group.addTask {
                    try? await cache.store(nil, data: self.png, forKey: "k\(i)", to: .disk)
                    _ = await cache.image(forKey: "k\(i)", from: .disk)
                    _ = await cache.containsImage(forKey: "k\(i)")
                    await cache.removeImage(forKey: "k\(i)")
                }
            }
        }
        let seen = threads.withLock { $0 }
        #expect(seen.count == 64)
        #expect(Set(seen) == ["webimage.disk-cache / wi.disk-cache"])
    }

    @Test func unusableDiskKeepsTheMemoryCacheWorking() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let blocker = dir.url.appendingPathComponent("file")
        try Data([0]).write(to: blocker)
        let cache = ImageCache(namespace: "x", directory: blocker.appendingPathComponent("cache"))
        let image = try Image(data: png)
        await #expect(throws: ImageError.self) { try await cache.store(image, data: png, forKey: "k", to: .all) }
        #expect(await cache.image(forKey: "k")?.cacheType == .memory)
    }

    @Test func defaultDirectoryFollowsXDG() {
        let url = DiskCache.defaultDirectory(namespace: "default")
        #expect(url.path.hasSuffix("com.webimage.cache/default"))
        #expect(ImageCache.shared.diskCache!.directory.lastPathComponent == "default")
    }
}

import Foundation
import Testing
@_spi(Testing) @testable import WebImage
#if canImport(Glibc)
import Glibc
#endif

/// The disk layer asked without suspending (SDWebImage's `diskImageDataExistsWithKey:`,
/// `diskImageDataForKey:` and `imageFromDiskCacheForKey:`; Nuke's `DataCache.containsData(for:)`
/// and `cachedData(for:)`), from a thread of the caller's own as the documentation says.
@Suite struct SynchronousLookupTests {
    static let png = try! Image(bitmap: Fixtures.gradient(width: 24, height: 16)).encoded(as: .png)

    /// Runs `body` on a thread of its own (not the cooperative pool) and returns its result.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in Thread { continuation.resume(returning: body()) }.start() }
    }

    static func cache(_ directory: URL, configuration: DiskCache.Configuration = .init()) -> ImageCache {
        ImageCache(memory: MemoryCache(), disk: DiskCache(directory: directory, configuration: configuration))
    }

    /// SDImageCacheTests' test40InsertionOfImageData: bytes stored to disk exist and read back
    /// at once, the memory layer stays empty, and after the removal both answers say so.
    @Test func storedBytesExistAndReadBackWithoutSuspending() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = Self.cache(dir.url)
        let key = "https://example.com/TestImageKey.png"
        #expect(await Self.onThread { cache.diskImageDataExists(forKey: key) } == false)
        #expect(await Self.onThread { cache.diskImageData(forKey: key) } == nil)
        try await cache.store(nil, data: Self.png, extendedData: nil, forKey: key, to: .disk, context: .init())
        #expect(await Self.onThread { cache.diskImageDataExists(forKey: key) })
        #expect(await Self.onThread { cache.diskImageData(forKey: key) } == Self.png)
        #expect(cache.cachedImage(forKey: key) == nil, "the memory layer was not filled")
        await cache.removeImage(forKey: key)
        #expect(await Self.onThread { cache.diskImageDataExists(forKey: key) } == false)
        #expect(await Self.onThread { cache.diskImageData(forKey: key) } == nil)
        #expect(cache.diskImageData(forKey: "") == nil && !cache.diskImageDataExists(forKey: ""))
    }

    /// SDImageCacheTests' test41ThatCustomDecoderWorksForImageCache: the entry decoded by the
    /// cache's coders, at the size asked, without going into memory; an entry that is not an
    /// image is a typed error and stays on disk.
    @Test func anEntryDecodesWithTheCachesCodersOrFailsTyped() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = Self.cache(dir.url)
        try await cache.store(nil, data: Self.png, extendedData: nil, forKey: "a.png", to: .disk, context: .init())
        let image = try #require(try cache.imageFromDiskCache(forKey: "a.png"))
        #expect(image.width == 24 && image.height == 16 && image.format == .png)
        let small = try #require(try cache.imageFromDiskCache(forKey: "a.png", options: ImageDecodingOptions(maxPixelSize: 12)))
        #expect(small.width == 12 && small.height == 8)
        #expect(cache.cachedImage(forKey: "a.png") == nil)
        #expect(try cache.imageFromDiskCache(forKey: "absent.png") == nil)
        try await cache.store(nil, data: Data("not an image".utf8), extendedData: nil, forKey: "b.png", to: .disk, context: .init())
        #expect(throws: ImageError.self) { try cache.imageFromDiskCache(forKey: "b.png") }
        #expect(cache.diskImageDataExists(forKey: "b.png"))
    }

    /// The same places as the asynchronous reads: SDWebImage's name before 5.x, and the
    /// additional read-only directories.
    @Test func olderNamesAndAdditionalDirectoriesAreFound() async throws {
        let main = TemporaryDirectory(), extra = TemporaryDirectory()
        defer { main.remove(); extra.remove() }
        let disk = DiskCache(directory: main.url, configuration: .init(additionalDirectories: [extra.url]))
        try Data("extra".utf8).write(to: extra.url.appendingPathComponent(DiskCache.fileName(forKey: "in-extra.jpg")))
        let legacy = String(DiskCache.fileName(forKey: "old.png").prefix(32))
        try Data("legacy".utf8).write(to: main.url.appendingPathComponent(legacy))
        #expect(await Self.onThread { disk.cachedData(forKey: "in-extra.jpg") } == Data("extra".utf8))
        #expect(await Self.onThread { disk.containsData(forKey: "in-extra.jpg") })
        #expect(await Self.onThread { disk.cachedData(forKey: "old.png") } == Data("legacy".utf8))
        #expect(await Self.onThread { disk.containsData(forKey: "old.png") })
        #expect(await Self.onThread { disk.containsData(forKey: "nowhere.png") } == false)
        // The asynchronous read still moves the legacy entry to its current name.
        #expect(await disk.data(forKey: "old.png") == Data("legacy".utf8))
        #expect(FileManager.default.fileExists(atPath: disk.fileURL(forKey: "old.png").path))
    }

    /// A key the cache knows is absent is answered without touching the file system, as the
    /// asynchronous reads answer it (NegativeLookupTests).
    @Test func aKnownAbsentKeyTouchesNoFile() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let trips = NegativeLookupTests.Trips()
        let disk = NegativeLookupTests.cache(dir.url.appendingPathComponent("cache"), trips: trips)
        try await disk.store(Data("here".utf8), forKey: "here.png")
        #expect(await disk.data(forKey: "absent-0.png") == nil)   // the first miss lists the folder
        trips.reset()
        #expect(await Self.onThread { (0..<100).allSatisfy { disk.cachedData(forKey: "absent-\($0).png") == nil && !disk.containsData(forKey: "absent-\($0).png") } })
        #expect(trips.value == 0)
        #expect(await Self.onThread { disk.cachedData(forKey: "here.png") } == Data("here".utf8))
        #expect(trips.value == 1)
    }

    /// With access-date expiry, a synchronous read counts as a read: the entry survives the
    /// expiry that removes an unread one of the same age.
    @Test func aSynchronousReadCountsForAccessDateExpiry() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let writer = DiskCache(directory: dir.url)
        let old = Int(Date().timeIntervalSince1970) - 10 * 86400
        for key in ["read", "unread"] {
            try await writer.store(Data(key.utf8), forKey: key)
            var times = [timespec(tv_sec: old, tv_nsec: 0), timespec(tv_sec: old, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, writer.fileURL(forKey: key).path, &times, 0) == 0)
        }
        let cache = DiskCache(directory: dir.url, configuration: .init(expireType: .accessDate))
        _ = await cache.count()   // the index is built from the old dates
        #expect(await Self.onThread { cache.cachedData(forKey: "read") } == Data("read".utf8))
        // The access is recorded on the cache's thread, after the read returned.
        let before = Date(timeIntervalSince1970: TimeInterval(old + 60))
        for _ in 0..<200 where await (cache.indexedAccessDate(forKey: "read") ?? .distantPast) < before {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await (cache.indexedAccessDate(forKey: "read") ?? .distantPast) > before)
        await cache.removeExpiredData()
        #expect(await cache.contains("read"))
        #expect(await !cache.contains("unread"))
    }
}

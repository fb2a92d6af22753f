import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import WebImage

/// The disk cache answers keys it knows are absent without touching the file system, and never
/// hides an entry another cache object or another process wrote to the same folder.
@Suite(.serialized) struct NegativeLookupTests {
    /// Calls that reached the file system.
    final class Trips: Sendable {
        private let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
        func reset() { count.store(0, ordering: .relaxed) }
    }

    static func cache(_ folder: URL, trips: Trips? = nil, negativeLookup: Bool = true) -> DiskCache {
        var configuration = DiskCache.Configuration(ioHook: { trips?.add() })
        configuration.cleanupInterval = nil
        configuration.negativeLookup = negativeLookup
        return DiskCache(directory: folder, configuration: configuration)
    }

    @Test func missesOfAbsentKeysReachNoFile() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let trips = Trips()
        let disk = Self.cache(directory.url.appendingPathComponent("cache"), trips: trips)
        try await disk.store(Data("here".utf8), forKey: "https://example.com/here.png")
        #expect(await disk.data(forKey: "https://example.com/absent-0.png") == nil)   // the first miss lists the folder
        trips.reset()
        for i in 1...1000 {
            #expect(await disk.data(forKey: "https://example.com/absent-\(i).png") == nil)
            #expect(await disk.entry(forKey: "https://example.com/absent-\(i).png") == nil)
            #expect(await disk.contains("https://example.com/absent-\(i).png") == false)
        }
        #expect(trips.value == 0, "\(trips.value) misses reached the file system")
        #expect(await disk.data(forKey: "https://example.com/here.png") == Data("here".utf8))
        #expect(trips.value == 1, "a hit reads its file")
        // Its own stores and removals keep the index right.
        try await disk.store(Data("new".utf8), forKey: "https://example.com/absent-7.png")
        #expect(await disk.data(forKey: "https://example.com/absent-7.png") == Data("new".utf8))
        await disk.removeData(forKey: "https://example.com/here.png")
        #expect(await disk.data(forKey: "https://example.com/here.png") == nil)
        // Switched off, every miss asks the file system.
        let plain = Self.cache(directory.url.appendingPathComponent("cache"), trips: trips, negativeLookup: false)
        trips.reset()
        #expect(await plain.data(forKey: "https://example.com/absent-1.png") == nil)
        #expect(trips.value == 1)
    }

    @Test func anEntryAnotherCacheObjectWroteIsFound() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let folder = directory.url.appendingPathComponent("cache")
        let mine = Self.cache(folder), theirs = Self.cache(folder)
        try await mine.store(Data("a".utf8), forKey: "a")
        #expect(await mine.data(forKey: "b") == nil)
        try await theirs.store(Data("b".utf8), forKey: "b")
        #expect(await mine.data(forKey: "b") == Data("b".utf8), "the shared counter told of the other writer")
        await theirs.removeData(forKey: "a")
        #expect(await mine.data(forKey: "a") == nil)
        #expect(await mine.contains("b"))
    }

    @Test func anEntryAnotherProcessWroteIsFound() async throws {
        let writer = try #require(CrashConsistencyTests.writer, "cache-crash-writer is built beside the tests")
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let folder = directory.url.appendingPathComponent("cache")
        let trips = Trips()
        let mine = Self.cache(folder, trips: trips)
        try await mine.store(Data("mine".utf8), forKey: "mine")
        #expect(await mine.data(forKey: "entry-1") == nil)
        trips.reset()
        #expect(await mine.data(forKey: "entry-1") == nil)
        #expect(trips.value == 0, "known absent")
        let process = Process()
        process.executableURL = writer
        process.arguments = [folder.path, "1", "3"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // Listed again at most once a second: within it, the file system is asked (and finds it).
        for index in 0..<3 {
            let data = try #require(await mine.data(forKey: "entry-\(index)"), "entry-\(index) is found")
            #expect(CrashConsistencyTests.check(data, extended: nil, key: "entry-\(index)", extendedRequired: false) == nil)
        }
        try await Task.sleep(for: .milliseconds(1100))
        trips.reset()
        #expect(await mine.data(forKey: "entry-9") == nil)
        #expect(await mine.data(forKey: "entry-2") != nil)
        #expect(await mine.data(forKey: "entry-10") == nil)
        #expect(trips.value == 1, "listed again: misses known absent once more")
    }

    @Test func anUnreadableFolderFallsBackToTheFileSystem() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let folder = directory.url.appendingPathComponent("cache")
        let disk = Self.cache(folder)
        try await disk.store(Data("x".utf8), forKey: "x")
        chmod(folder.path, 0o300)   // searchable, not listable
        defer { chmod(folder.path, 0o700) }
        let other = Self.cache(folder)
        #expect(await other.data(forKey: "x") == Data("x".utf8), "a folder it cannot list hides nothing")
    }
}

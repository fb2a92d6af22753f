import Foundation
import Synchronization
import Testing
@testable import WebImage

@Suite struct MemoryCacheTests {
    func image(_ side: Int = 10) -> Image { Image(bitmap: Fixtures.gradient(width: side, height: side)) }

    @Test func evictsLeastRecentlyUsedByCost() async {
        let cache = MemoryCache(configuration: .init(costLimit: 1000, maxEntryFraction: 1, usesWeakCache: false))
        for key in ["a", "b", "c"] { cache.setImage(image(), forKey: key, cost: 300) }
        _ = cache.image(forKey: "a")              // a becomes the most recent
        cache.setImage(image(), forKey: "d", cost: 300)
        #expect(cache.image(forKey: "b") == nil)  // the oldest went
        #expect(cache.image(forKey: "a") != nil)
        #expect(cache.totalCost == 900)
        #expect(cache.count == 3)
    }

    /// The last key that missed is remembered only until an entry is added (any key): a key
    /// that missed is found once it is stored, and its own miss is asked again after.
    @Test func aKeyThatMissedIsFoundOnceStored() async {
        for weak in [false, true] {
            let cache = MemoryCache(configuration: .init(costLimit: 1 << 30, usesWeakCache: weak))
            #expect(cache.image(forKey: "a") == nil)
            #expect(cache.image(forKey: "a") == nil, "a second miss of the same key")
            cache.setImage(image(), forKey: "a")
            #expect(cache.image(forKey: "a") != nil, "stored after it missed")
            #expect(cache.image(forKey: "b") == nil)
            cache.setImage(image(), forKey: "c")
            cache.setImage(image(), forKey: "b")
            #expect(cache.image(forKey: "b") != nil, "stored after it missed, with another store between")
            cache.removeImage(forKey: "b")
            #expect(cache.image(forKey: "b") == nil)
        }
    }

    @Test func evictsByCount() async {
        let cache = MemoryCache(configuration: .init(costLimit: 1 << 30, countLimit: 2, usesWeakCache: false))
        for key in ["a", "b", "c"] { cache.setImage(image(), forKey: key) }
        #expect(cache.count == 2)
        #expect(!cache.contains("a"))
    }

    @Test func entryOverTheFractionIsNotKept() async {
        let cache = MemoryCache(configuration: .init(costLimit: 10_000, usesWeakCache: false))
        cache.setImage(image(), forKey: "small", cost: 1000)
        cache.setImage(image(), forKey: "big", cost: 1001)   // over 10 %
        #expect(cache.contains("small"))
        #expect(!cache.contains("big"))
        #expect(cache.totalCost == 1000)
    }

    @Test func replacingAKeyKeepsTheCostRight() async {
        let cache = MemoryCache(configuration: .init(costLimit: 10_000, maxEntryFraction: 1))
        cache.setImage(image(), forKey: "a", cost: 100)
        cache.setImage(image(), forKey: "a", cost: 250)
        #expect(cache.totalCost == 250)
        #expect(cache.count == 1)
        cache.removeImage(forKey: "a")
        #expect(cache.totalCost == 0)
    }

    @Test func weakCacheFindsEvictedImagesStillHeld() async {
        let cache = MemoryCache(configuration: .init(costLimit: 1000, maxEntryFraction: 1))
        let held = image()
        cache.setImage(held, forKey: "held", cost: 600)
        cache.setImage(image(), forKey: "dropped", cost: 600)    // evicts "held", and "dropped" has no owner
        cache.setImage(image(), forKey: "other", cost: 600)      // evicts "dropped"
        let found = cache.image(forKey: "held")
        #expect(found?.bitmap == held.bitmap)
        #expect(cache.image(forKey: "dropped") == nil)          // nobody held it
        withExtendedLifetime(held) {}
    }

    /// An image in the strong cache has no weak reference (which would send every retain and
    /// release of it down the runtime's slow path); it gets one when it is evicted.
    @Test func onlyEvictedImagesAreReferencedWeakly() async {
        let cache = MemoryCache(configuration: .init(costLimit: 1000, maxEntryFraction: 1))
        for key in ["a", "b", "c"] { cache.setImage(image(), forKey: key, cost: 300) }
        #expect(cache.weakEntryCount == 0)
        cache.setImage(image(), forKey: "d", cost: 300)   // evicts "a"
        #expect(cache.weakEntryCount == 1)
        cache.setImage(image(), forKey: "a", cost: 100)   // back in the strong cache
        #expect(cache.weakEntryCount == 0)
    }

    @Test func memoryPressureEmptiesTheStrongCacheButKeepsTheWeakOne() async {
        let cache = MemoryCache(configuration: .init(costLimit: 1 << 20))
        let held = image()
        cache.setImage(held, forKey: "held")
        cache.setImage(image(), forKey: "loose")
        cache.handleMemoryPressure()
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(cache.image(forKey: "held") != nil)
        #expect(cache.image(forKey: "loose") == nil)
        withExtendedLifetime(held) {}
    }

    @Test func entriesExpire() async throws {
        let cache = MemoryCache(configuration: .init(costLimit: 1 << 20, entryLifetime: .milliseconds(50), usesWeakCache: false))
        cache.setImage(image(), forKey: "a")
        #expect(cache.image(forKey: "a") != nil)
        try await Task.sleep(for: .milliseconds(80))
        #expect(cache.image(forKey: "a") == nil)
        #expect(cache.totalCost == 0)
        // The expired key is remembered as the last miss until an entry is added.
        #expect(cache.image(forKey: "a") == nil, "a second miss after the expiry")
        cache.setImage(image(), forKey: "a")
        #expect(cache.image(forKey: "a") != nil, "stored again after it expired")
    }

    @Test func trimAndRemoveAll() async {
        let cache = MemoryCache(configuration: .init(costLimit: 1 << 20, maxEntryFraction: 1))
        for index in 0..<10 { cache.setImage(image(), forKey: "\(index)", cost: 100) }
        cache.trim(toCost: 450)
        #expect(cache.count == 4)
        #expect(cache.contains("9"))
        #expect(!cache.contains("0"))
        cache.trim(toCount: 1)
        #expect(cache.count == 1)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
    }

    /// Checked against the machine read another way: MemTotal from /proc/meminfo and the
    /// cgroup v2 limit read here, not through ProcessMemory.
    @Test func defaultLimitIsFifteenPercentOfProcessMemory() throws {
        let meminfo = try String(contentsOfFile: "/proc/meminfo", encoding: .utf8)
        let line = try #require(meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") })
        let kib = try #require(Double(line.split(separator: " ").dropFirst().first ?? ""))
        var available = kib * 1024
        if let text = try? String(contentsOfFile: "/sys/fs/cgroup/memory.max", encoding: .utf8),
           let cgroup = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            available = min(available, cgroup)
        }
        let expected = available * 0.15
        let actual = Double(MemoryCache.Configuration.defaultCostLimit)
        #expect(abs(actual - expected) / expected < 0.01, "default cost limit \(actual), expected about \(expected)")
    }

    @Test func cgroupLimitCapsTheProcessMemory() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        try "1073741824\n".write(to: dir.url.appendingPathComponent("memory.max"), atomically: true, encoding: .utf8)
        #expect(ProcessMemory.limit(cgroupRoot: dir.url.path) == min(1 << 30, ProcessInfo.processInfo.physicalMemory))
        try "max\n".write(to: dir.url.appendingPathComponent("memory.max"), atomically: true, encoding: .utf8)
        #expect(ProcessMemory.limit(cgroupRoot: dir.url.path) == ProcessInfo.processInfo.physicalMemory)
    }

    @Test func lruListStaysConsistent() {
        var list = LRUList<Int, Int>()
        for i in 0..<100 { list.set(i, for: i) }
        for i in stride(from: 0, to: 100, by: 2) { _ = list.touch(i) }
        for i in stride(from: 1, to: 100, by: 4) { list.remove(i) }
        var order: [Int] = []
        while let (key, _) = list.popOldest() { order.append(key) }
        let expected = stride(from: 3, to: 100, by: 4).map { $0 } + stride(from: 0, to: 100, by: 2).map { $0 }
        #expect(order == expected)
        #expect(list.isEmpty)
    }

    /// Touching the newest entry (a memory hit's usual case, which skips relinking) keeps the
    /// order; touching the oldest, a middle and the only entry moves each to the newest end.
    @Test func touchingTheNewestEntryKeepsTheOrder() {
        var list = LRUList<Int, Int>()
        for i in 0..<4 { list.set(i * 10, for: i) }
        #expect(list.touch(3) == 30)
        #expect(list.touch(3) == 30)
        #expect(list.touch(0) == 0)
        #expect(list.touch(2) == 20)
        #expect(list.touch(9) == nil)
        var order: [Int] = []
        while let (key, _) = list.popOldest() { order.append(key) }
        #expect(order == [1, 3, 0, 2])
        list.set(7, for: 7)
        #expect(list.touch(7) == 7)
        #expect(list.popOldest()?.key == 7)
        #expect(list.popOldest() == nil)
    }

    @Test func memoryPressureParsers() {
        #expect(MemoryPressureWatcher.eventCount("low 0\nhigh 3\nmax 2\noom 0\noom_kill 0\n") == 5)
        #expect(MemoryPressureWatcher.eventCount(nil) == 0)
        #expect(MemoryPressureWatcher.someAverage10("some avg10=12.50 avg60=1.00 avg300=0.10 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0") == 12.5)
    }

    @Test func watcherCallsBackWhenTheCgroupReportsPressure() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let events = dir.url.appendingPathComponent("memory.events")
        try "low 0\nhigh 0\nmax 0\n".write(to: events, atomically: true, encoding: .utf8)
        let fired = Mutex(false)
        let watcher = MemoryPressureWatcher()
        await watcher.start(interval: .milliseconds(20), cgroupRoot: dir.url.path) { fired.withLock { $0 = true } }
        try await Task.sleep(for: .milliseconds(100))
        try "low 0\nhigh 4\nmax 0\n".write(to: events, atomically: true, encoding: .utf8)
        for _ in 0..<100 where !fired.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        await watcher.stop()
        #expect(fired.withLock { $0 })
    }
}

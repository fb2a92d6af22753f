import Foundation
import Synchronization
import Testing
@testable import WebImage

/// `ImageCachesManager`, each operation policy as SDWebImage's `SDImageCacheTests` checks its
/// `SDImageCachesManager` (`test60CustomCachesManagerOperationPolicy...`): which caches are
/// asked, in which order, and whose answer wins.
@Suite struct CachesManagerTests {
    /// A cache over a dictionary that logs each call by its name, optionally slow to answer.
    final class LoggingCache: ImageCaching {
        let name: String
        let log: Log
        let delay: Duration
        private let images = Mutex<[String: Image]>([:])

        init(_ name: String, log: Log, delay: Duration = .zero) {
            (self.name, self.log, self.delay) = (name, log, delay)
        }

        func put(_ image: Image, _ key: String) { images.withLock { $0[key] = image } }
        func has(_ key: String) -> Bool { images.withLock { $0[key] != nil } }

        func image(forKey key: String, query: ImageCacheQuery) async -> ImageCacheResult? {
            log.add("\(name).query")
            if delay > .zero { try? await Task.sleep(for: delay) }
            return images.withLock { $0[key] }.map { ImageCacheResult(image: $0, data: nil, cacheType: .disk) }
        }
        func store(_ image: Image?, data: Data?, extendedData: Data?, forKey key: String, to destination: ImageCacheType,
                   context: ImageContext) async throws {
            log.add("\(name).store")
            if let image { put(image, key) }
        }
        func removeImage(forKey key: String, from scope: ImageCacheType) async {
            log.add("\(name).remove")
            _ = images.withLock { $0.removeValue(forKey: key) }
        }
        func containsImage(forKey key: String, in scope: ImageCacheType) async -> ImageCacheType {
            log.add("\(name).contains")
            return has(key) ? .disk : .none
        }
        func clear(_ scope: ImageCacheType) async {
            log.add("\(name).clear")
            images.withLock { $0 = [:] }
        }
    }

    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
        var sorted: [String] { all.sorted() }
    }

    static func image(_ width: Int) -> Image { Image(bitmap: Fixtures.gradient(width: width, height: 1)) }

    /// Two caches, low (first) and high (last), each holding its own image under "k" as asked.
    func caches(lowHas: Bool, highHas: Bool, highDelay: Duration = .zero) -> (LoggingCache, LoggingCache, Log) {
        let log = Log()
        let low = LoggingCache("low", log: log), high = LoggingCache("high", log: log, delay: highDelay)
        if lowHas { low.put(Self.image(1), "k") }
        if highHas { high.put(Self.image(2), "k") }
        return (low, high, log)
    }

    @Test func aSerialQueryAsksTheHighestFirstAndStopsAtAHit() async {
        let (low, high, log) = caches(lowHas: true, highHas: true)
        let manager = ImageCachesManager([low, high])
        #expect(await manager.image(forKey: "k", query: .init())?.image.width == 2)
        #expect(log.all == ["high.query"])
        let (low2, high2, log2) = caches(lowHas: true, highHas: false)
        #expect(await ImageCachesManager([low2, high2]).image(forKey: "k", query: .init())?.image.width == 1)
        #expect(log2.all == ["high.query", "low.query"])
    }

    @Test func aConcurrentQueryAsksEveryCacheAndTheFirstHitWins() async {
        let (low, high, log) = caches(lowHas: true, highHas: true, highDelay: .milliseconds(300))
        let manager = ImageCachesManager([low, high], queryPolicy: .concurrent)
        let start = ContinuousClock.now
        #expect(await manager.image(forKey: "k", query: .init())?.image.width == 1, "the quicker cache answered")
        #expect(ContinuousClock.now - start < .milliseconds(250), "without waiting for the slow one")
        #expect(log.sorted == ["high.query", "low.query"])
    }

    @Test func highestOnlyAndLowestOnlyQueriesAskOneCache() async {
        let (low, high, log) = caches(lowHas: true, highHas: false)
        #expect(await ImageCachesManager([low, high], queryPolicy: .highestOnly).image(forKey: "k", query: .init()) == nil)
        #expect(log.all == ["high.query"])
        let (low2, high2, log2) = caches(lowHas: false, highHas: true)
        #expect(await ImageCachesManager([low2, high2], queryPolicy: .lowestOnly).image(forKey: "k", query: .init()) == nil)
        #expect(log2.all == ["low.query"])
    }

    @Test func storesFollowTheirPolicy() async throws {
        for (policy, expected) in [(ImageCachesManager.OperationPolicy.highestOnly, ["high.store"]), (.lowestOnly, ["low.store"]),
                                   (.serial, ["high.store", "low.store"]), (.concurrent, ["high.store", "low.store"])] {
            let (low, high, log) = caches(lowHas: false, highHas: false)
            try await ImageCachesManager([low, high], storePolicy: policy).store(Self.image(3), data: nil, forKey: "k", to: .all)
            #expect(policy == .concurrent ? log.sorted == expected : log.all == expected, "\(policy)")
            #expect(high.has("k") == expected.contains("high.store") && low.has("k") == expected.contains("low.store"))
        }
    }

    @Test func removalPresenceAndClearingFollowTheirPolicies() async {
        let (low, high, log) = caches(lowHas: true, highHas: true)
        let manager = ImageCachesManager([low, high])
        #expect(await manager.containsImage(forKey: "k", in: .all) == .disk)
        #expect(log.all == ["high.contains"], "serial presence stops at the first cache that has it")
        await manager.removeImage(forKey: "k", from: .all)
        #expect(!low.has("k") && !high.has("k"), "a concurrent removal reaches both")
        #expect(await manager.containsImage(forKey: "k", in: .all) == ImageCacheType.none)
        low.put(Self.image(1), "x")
        await ImageCachesManager([low, high], clearPolicy: .highestOnly).clear(.all)
        #expect(low.has("x"), "a highest-only clear leaves the lower cache")
        await manager.clear(.all)
        #expect(!low.has("x"))
    }

    /// Through a manager: a load is stored in the highest cache only (the default), and a later
    /// call with an empty highest cache is answered by the lower one.
    @Test func anImageManagerOverTheCaches() async throws {
        let (low, high, _) = caches(lowHas: false, highHas: false)
        let h = try await ManagerHarness()
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let manager = ImageManager(cache: ImageCachesManager([low, high]), loaders: ImageLoaders([h.loader]))
        let url = h.url("/a.png")
        _ = try await manager.image(for: url, options: .waitStoreCache)
        #expect(high.has(url.absoluteString) && !low.has(url.absoluteString))
        low.put(Self.image(5), url.absoluteString)
        await high.clear(.all)
        #expect(try await manager.image(for: url).width == 5)
        #expect(h.server.requestCount("/a.png") == 1)
        await h.finish()
    }
}

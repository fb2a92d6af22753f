import Foundation
import Testing
@testable import WebImage

/// Peak memory while many distinct images go through one manager, against its budget: the
/// memory cache's limit, 64 MB, and what the decodes in flight hold. (The full-size soak, 10,000
/// images up to 12 MP, is `SoakBenchmarks`.)
@Suite(.serialized) struct MemorySoakTests {
    static let big = try! Image(bitmap: Fixtures.gradient(width: 2000, height: 1500, opaque: true)).encoded(as: .jpeg)
    static let medium = try! Image(bitmap: Fixtures.gradient(width: 640, height: 480)).encoded(as: .png)

    /// Whether memory is measured: not under a sanitizer (scripts/sanitize.sh sets
    /// WEBIMAGE_SANITIZER), whose shadow memory, redzones and quarantine are not the library's.
    static let measuresMemory = ProcessInfo.processInfo.environment["WEBIMAGE_SANITIZER"] == nil

    /// This process's VmRSS or VmHWM, in bytes.
    static func status(_ field: String) -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kilobytes << 10
    }

    /// The paths of `count` distinct URLs: a tenth 3 MP JPEGs, a fifth 640x480 PNGs, the rest 64x48.
    static func paths(_ count: Int) -> [String] {
        (0..<count).map { i in (i % 10 == 0 ? "/big.jpg" : i % 10 < 3 ? "/medium.png" : "/small.png") + "?n=\(i)" }
    }

    /// The managers of the soaks start transfers as fast as the loader takes them (no rate
    /// limiter): a burst at full speed is the worst case for memory and open files.
    static var unlimited: ImageManager.Configuration {
        var configuration = ImageManager.Configuration()
        configuration.rateLimiter = nil
        return configuration
    }

    static func harness(memoryLimit: Int, directory: TemporaryDirectory) async throws -> ManagerHarness {
        var loader = HTTPImageLoader.Configuration()
        loader.maximumConcurrentDownloads = 6
        let cache = ImageCache(namespace: "soak", directory: directory.url,
                               config: ImageCacheConfig(maxMemoryCost: memoryLimit, cleanupInterval: nil))
        let h = try await ManagerHarness(loaderConfiguration: loader, configuration: unlimited, cache: cache)
        h.server.route("/big.jpg", .respond(contentType: "image/jpeg", body: big))
        h.server.route("/medium.png", .respond(body: medium))
        h.server.route("/small.png", .respond(body: ManagerHarness.png))
        return h
    }

    /// Runs `body` and returns how far the resident set rose above where it started.
    static func peakGrowth(_ body: () async throws -> Void) async rethrows -> Int {
        let baseline = status("VmRSS")
        // Writing 5 to clear_refs resets the kernel's high-water mark to the current RSS.
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        try await body()
        return status("VmHWM") - baseline
    }

    /// The soaks' memory cache limit, and their budget: that limit, 64 MB, six 3 MP decodes.
    static let memoryLimit = 16 << 20
    static let budget = memoryLimit + (64 << 20) + 6 * (2000 * 1500 * 4)

    /// Runs `body` with a fresh harness (16 MB memory cache) and 300 distinct URLs on it.
    static func withSoak(_ body: (ManagerHarness, [URL]) async throws -> Void) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let h = try await harness(memoryLimit: memoryLimit, directory: directory)
        try await body(h, paths(300).map { h.url($0) })
        await h.finish()
    }

    @Test func distinctImagesStayWithinTheMemoryBudget() async throws {
        try await Self.withSoak { h, urls in
            let (memoryLimit, budget) = (Self.memoryLimit, Self.budget)
            let manager = h.manager
            let growth = try await Self.peakGrowth {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for url in urls { group.addTask { _ = try await manager.image(for: url) } }
                    try await group.waitForAll()
                }
                await manager.waitForPendingStores()
            }
            #expect(!Self.measuresMemory || growth <= budget, "peak growth \(growth >> 20) MB, budget \(budget >> 20) MB")
            #expect(h.cache.memoryCache!.totalCost <= memoryLimit)
            print("memory soak: 300 images at once, peak growth \(growth >> 20) MB of a \(budget >> 20) MB budget")
        }
    }

    @Test func prefetchingStaysWithinTheMemoryBudget() async throws {
        try await Self.withSoak { h, urls in
            let budget = Self.budget
            let prefetcher = ImagePrefetcher(manager: h.manager, maxConcurrentPrefetchCount: 6)
            var last = PrefetchProgress(finished: 0, skipped: 0, total: 0)
            let growth = await Self.peakGrowth {
                for await progress in prefetcher.prefetch(urls) { last = progress }
                await h.manager.waitForPendingStores()
            }
            #expect(last.finished == 300)
            #expect(!Self.measuresMemory || growth <= budget, "peak growth \(growth >> 20) MB, budget \(budget >> 20) MB")
            print("memory soak: 300 images prefetched, peak growth \(growth >> 20) MB of a \(budget >> 20) MB budget")
        }
    }

    /// Load: 10,000 calls at once over 1,000 URLs (ten callers each), with 1,024 open files
    /// allowed, with the default six downloads at once and with 2,000: every call gets its image
    /// (no "too many open files" reaches a caller), in bounded memory.
    @Test(arguments: [6, 2_000]) func tenThousandCallsWithTheOpenFileLimitAt1024(downloads: Int) async throws {
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        var limited = saved
        limited.rlim_cur = min(saved.rlim_max, 1024)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limited)
        defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) }

        var loader = HTTPImageLoader.Configuration()
        loader.maximumConcurrentDownloads = downloads
        let h = try await ManagerHarness(loaderConfiguration: loader, configuration: Self.unlimited)
        h.server.route("/small.png", .respond(body: ManagerHarness.png))
        let urls = (0..<1000).map { h.url("/small.png?n=\($0)") }
        let manager = h.manager
        let clock = ContinuousClock()
        let start = clock.now
        let growth = await Self.peakGrowth {
            let failures = await withTaskGroup(of: String?.self) { group in
                for index in 0..<10_000 {
                    let url = urls[index % urls.count]
                    group.addTask {
                        do { _ = try await manager.image(for: url); return nil } catch { return "\(error)" }
                    }
                }
                var failures: [String] = []
                for await failure in group { if let failure { failures.append(failure) } }
                return failures
            }
            #expect(failures.count == 0, "\(failures.count) failed, first: \(failures.first ?? "")")
            await manager.waitForPendingStores()
        }
        #expect(h.server.requestCount("/small.png") == 1000)   // ten callers of a URL share one download
        // The budget of the soak: what the memory cache holds, 64 MB, six decodes of 64x48.
        let budget = h.cache.memoryCache!.totalCost + (64 << 20) + 6 * 64 * 48 * 4
        #expect(!Self.measuresMemory || growth <= budget, "peak growth \(growth >> 20) MB, budget \(budget >> 20) MB")
        print("load: 10,000 calls over 1,000 URLs, \(downloads) downloads at once, 1,024 files: \(clock.now - start), "
              + "\(h.server.requestCount("/small.png")) requests, peak growth \(growth >> 20) MB")
        await h.finish()
    }

    /// A burst of distinct calls beyond `maximumConcurrentLoads` waits without the tasks of a
    /// running load (its own, its transfer's): 5,000 waiting calls cost about 8 KB each in a
    /// debug build, the caller's task included (26 KB each when every load started at once).
    @Test func waitingCallsHoldNoLoadTasks() async throws {
        let h = try await ManagerHarness()
        h.server.route("/stall.png", .delayed(.seconds(30), .respond(body: ManagerHarness.png)))
        let urls = (0..<5_000).map { h.url("/stall.png?n=\($0)") }
        let manager = h.manager
        let baseline = Self.status("VmRSS")
        let tasks = urls.map { url in Task { _ = try? await manager.image(for: url) } }
        for _ in 0..<1_000 where await manager.inFlightCounts().loads < urls.count { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(300))
        let perCall = (Self.status("VmRSS") - baseline) / urls.count
        #expect(await manager.inFlightCounts().loads == urls.count)
        #expect(manager.pipeline.admission.counts == (64, urls.count - 64))
        #expect(!Self.measuresMemory || perCall < 14 << 10, "\(perCall) bytes a waiting call")
        print("admission: 5,000 waiting calls, \(perCall) bytes each")
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        #expect(manager.pipeline.admission.counts.waiting == 0, "every cancelled load withdrawn")
        await h.finish()
    }
}

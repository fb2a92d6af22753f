import BenchSupport
import CRawDecoders
import Foundation
import Synchronization
import WebImage

// Memory and load soak for issue "Reliability": peak resident memory against its budget while
// 10,000 distinct images (80 % 12 KB JPEGs, 16 % 1024x768 WebP/PNG, 4 % 12 MP JPEG/PNG) go
// through one ImageManager (64 MB memory cache, 6 downloads at once), then through an
// ImagePrefetcher, then 10,000 concurrent calls over 1,000 URLs with the open-file limit at
// 1,024. Served by nginx on 127.0.0.1 (http-bench.sh).
// Usage: SoakBenchmarks FIXTURES_DIR ANCHORS_FILE BASE_URL [COUNT]

let run = BenchRun(usage: "SoakBenchmarks")
let arguments = CommandLine.arguments
let base = arguments.count >= 4 ? arguments[3] : "http://127.0.0.1:8080"
let count = arguments.count >= 5 ? Int(arguments[4]) ?? 10_000 : 10_000
let work = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-soak-\(getpid())")
let memoryLimit = 64 << 20
let clock = ContinuousClock()

/// The fixture behind the `index`th URL, and how many bytes its decode holds.
func fixture(_ index: Int) -> (path: String, decodedBytes: Int) {
    switch index % 100 {
    case 0, 1: ("photo-4000x3000.jpg", 4000 * 3000 * 4)
    case 2, 3: ("rgba-4000x3000.png", 4000 * 3000 * 4)
    case 4..<12: ("photo-1024x768.webp", 1024 * 768 * 4)
    case 12..<20: ("rgba-1024x768.png", 1024 * 768 * 4)
    default: (String(format: "small/%04d.jpg", index % 1000), 256 * 256 * 4)
    }
}
for name in ["photo-4000x3000.jpg", "rgba-4000x3000.png", "photo-1024x768.webp", "rgba-1024x768.png"] { _ = run.load(name) }

/// VmHWM or VmRSS of this process, in bytes.
func status(_ field: String) -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
          let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return 0 }
    return kilobytes << 10
}
/// Starts a new peak: the kernel's high-water mark goes back to the current RSS.
func resetPeak() { try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8) }
func mb(_ bytes: Int) -> String { String(format: "%.0f MB", Double(bytes) / 1_048_576) }

func freshManager(_ name: String) -> ImageManager {
    var loader = HTTPImageLoader.Configuration()
    loader.maximumConcurrentDownloads = 6
    let cache = ImageCache(namespace: "soak", directory: work.appendingPathComponent(name),
                           config: ImageCacheConfig(maxMemoryCost: memoryLimit, cleanupInterval: nil))
    // No rate limiter (on by default, 80 a second): the burst at full speed is the worst case.
    var configuration = ImageManager.Configuration()
    configuration.rateLimiter = nil
    return ImageManager(cache: cache, loaders: ImageLoaders([HTTPImageLoader(configuration: loader)]), configuration: configuration)
}

/// The allocator's view at the moment of highest RSS: bytes in use (heap + mmapped chunks) and
/// bytes the heaps hold free. Sampled every 20 ms on a thread of its own.
final class PeakSampler: Sendable {
    private let state = Mutex((rss: 0, inUse: 0, heapFree: 0, mapped: 0, running: true))

    func start() {
        let trims = ProcessInfo.processInfo.environment["WEBIMAGE_SOAK_TRIM"] != nil
        Thread { [self] in
            while state.withLock({ $0.running }) {
                let rss = status("VmRSS")
                if rss > state.withLock({ $0.rss }) {
                    var inUse = 0, heapFree = 0, mapped = 0
                    raw_malloc_stats(&inUse, &heapFree, &mapped)
                    state.withLock { $0 = (rss, inUse, heapFree, mapped, true) }
                }
                if trims { _ = raw_malloc_trim() }
                usleep(20_000)
            }
        }.start()
    }

    func stop() -> (rss: Int, inUse: Int, heapFree: Int, mapped: Int) {
        state.withLock { state in
            state.running = false
            return (state.rss, state.inUse, state.heapFree, state.mapped)
        }
    }
}

/// Runs `body`, then prints its peak memory beside `budget` (over the RSS it started from).
func measure(_ name: String, budget: Int, _ body: () async -> (done: Int, failed: [String])) async {
    let baseline = status("VmRSS")
    resetPeak()
    let sampler = PeakSampler()
    sampler.start()
    let start = clock.now
    let (done, failed) = await body()
    let elapsed = clock.now - start
    let peak = status("VmHWM") - baseline
    let sample = sampler.stop()
    print("  at the highest sampled RSS (\(mb(sample.rss))): malloc in use \(mb(sample.inUse)) (mmapped \(mb(sample.mapped))), free in the heap \(mb(sample.heapFree))")
    print("\(name): \(done) images in \(formatted(milliseconds(elapsed) / 1000)) s, \(failed.count) failed; "
          + "peak RSS \(mb(peak)) over the start (\(mb(baseline))), budget \(mb(budget)): "
          + (peak <= budget ? "within" : "OVER") + String(format: " (%.2fx)", Double(peak) / Double(budget)))
    for failure in failed.prefix(5) { print("  failed: \(failure)") }
}

// WEBIMAGE_SOAK_STORE=memory: no disk writes (to see what pending writes hold).
let soakContext: ImageContext = {
    var context = ImageContext()
    if ProcessInfo.processInfo.environment["WEBIMAGE_SOAK_STORE"] == "memory" { context.storeCacheType = .memory }
    return context
}()
let urls = (0..<count).map { URL(string: "\(base)/\(fixture($0).path)?soak=\($0)")! }
// The memory cache's limit, 64 MB, and what six decodes at once of the largest image hold.
let largest = (0..<100).map { fixture($0).decodedBytes }.max()!
let budget = memoryLimit + (64 << 20) + 6 * largest
print("budget: memory cache \(mb(memoryLimit)) + 64 MB + 6 decodes of \(mb(largest)) = \(mb(budget))")

await measure("\(count) distinct images through image(for:), all called at once", budget: budget) {
    let manager = freshManager("manager")
    return await withTaskGroup(of: String?.self) { group in
        for url in urls {
            group.addTask {
                do { _ = try await manager.image(for: url, context: soakContext); return nil } catch { return "\(url.lastPathComponent): \(error)" }
            }
        }
        var failed: [String] = []
        for await failure in group { if let failure { failed.append(failure) } }
        await manager.waitForPendingStores()
        return (urls.count - failed.count, failed)
    }
}

await measure("\(count) distinct images through ImagePrefetcher (6 at once)", budget: budget) {
    let manager = freshManager("prefetcher")
    let prefetcher = ImagePrefetcher(manager: manager, maxConcurrentPrefetchCount: 6)
    var last = PrefetchProgress(finished: 0, skipped: 0, total: urls.count)
    for await progress in prefetcher.prefetch(urls) { last = progress }
    await manager.waitForPendingStores()
    return (last.finished, last.skipped > 0 ? ["\(last.skipped) skipped"] : [])
}

// Load: 10,000 concurrent calls over 1,000 URLs, ten callers each, with 1,024 open files allowed.
var limit = rlimit(rlim_cur: 1024, rlim_max: 1024)
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = min(limit.rlim_max, 1024)
setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
let shared = (0..<1000).map { urls[$0 % urls.count] }
await measure("10,000 concurrent calls over 1,000 URLs, open-file limit \(limit.rlim_cur)", budget: budget) {
    let manager = freshManager("load")
    return await withTaskGroup(of: String?.self) { group in
        for index in 0..<10_000 {
            let url = shared[index % shared.count]
            group.addTask {
                do { _ = try await manager.image(for: url); return nil } catch { return "\(url.lastPathComponent): \(error)" }
            }
        }
        var failed: [String] = []
        for await failure in group { if let failure { failed.append(failure) } }
        await manager.waitForPendingStores()
        return (10_000 - failed.count, failed)
    }
}
try? FileManager.default.removeItem(at: work)

import BenchSupport
import CoreMetrics
import Foundation
import Prometheus
import Synchronization
import WebImage

// ImageManager benchmarks for issue "ImageManager": memory-hit latency through image(for:),
// 1,000 concurrent callers of one uncached URL, and 1,000 distinct small JPEGs end to end
// against the sum of the stages measured alone, all from nginx on 127.0.0.1 in one run.
// Usage: ManagerBenchmarks FIXTURES_DIR ANCHORS_FILE BASE_URL (http-bench.sh starts nginx)

// WEBIMAGE_METRICS=prometheus: swift-prometheus is the metrics backend (bootstrapped before any
// manager is made), to see what the library's metrics cost when a program collects them.
if ProcessInfo.processInfo.environment["WEBIMAGE_METRICS"] == "prometheus" {
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
}
// WEBIMAGE_PIXEL_POOL=off: decoded pixels are not recycled (PixelBufferPool.limit = 0), to
// measure what the pool saves in the same build.
if ProcessInfo.processInfo.environment["WEBIMAGE_PIXEL_POOL"] == "off" { PixelBufferPool.limit = 0 }
let run = BenchRun(usage: "ManagerBenchmarks")
let base = CommandLine.arguments.count >= 4 ? CommandLine.arguments[3] : "http://127.0.0.1:8080"
let smallURLs = (0..<1000).map { URL(string: String(format: "\(base)/small/%04d.jpg", $0))! }
let smallBlobs = (0..<1000).map { run.load(String(format: "small/%04d.jpg", $0)) }
let clock = ContinuousClock()
// WEBIMAGE_BENCH_DIR=/dev/shm puts the caches on tmpfs: the pipeline without the disk's noise.
let work = (ProcessInfo.processInfo.environment["WEBIMAGE_BENCH_DIR"].map { URL(fileURLWithPath: $0) }
    ?? FileManager.default.temporaryDirectory).appendingPathComponent("webimage-manager-bench-\(getpid())")
// The caches under `work` are removed at the end of the run, or by finishMode() in a diagnostic mode.
/// Ends a diagnostic mode: removes the caches it made, then exits.
func finishMode() -> Never {
    try? FileManager.default.removeItem(at: work)
    exit(0)
}
func ms(_ duration: Duration) -> Double { milliseconds(duration) }
func f(_ value: Double) -> String { formatted(value) }

/// First times of named moments.
final class Timeline: Sendable {
    let marks = Mutex<[String: ContinuousClock.Instant]>([:])
    func mark(_ name: String) { marks.withLock { if $0[name] == nil { $0[name] = .now } } }
    func first(_ name: String) -> ContinuousClock.Instant? { marks.withLock { $0[name] } }
}

/// Counts the requests that reach the HTTP loader.
final class CountingLoader: ImageLoader {
    let base = HTTPImageLoader()
    let count = Mutex(0)
    let times = Mutex<[ContinuousClock.Instant]>([])
    func canLoad(_ url: URL) -> Bool { base.canLoad(url) }
    func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        count.withLock { $0 += 1 }
        return base.load(request)
    }
    func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) {
        count.withLock { $0 += 1 }
        times.withLock { $0.append(.now) }
        defer { times.withLock { $0.append(.now) } }
        return try await base.data(for: request)
    }
}

let cacheNumber = Mutex(0)
/// A new directory under the benchmark's work folder.
/// The managers measured start transfers as fast as their loader takes them: Nuke's rate
/// limiter (on by default, 80 a second) is a throttle by design, not a cost to measure.
let unlimited: ImageManager.Configuration = {
    var configuration = ImageManager.Configuration()
    configuration.rateLimiter = nil
    if let limit = ProcessInfo.processInfo.environment["WEBIMAGE_MAX_LOADS"].flatMap({ Int($0) }) { configuration.maximumConcurrentLoads = limit }
    return configuration
}()
func freshDirectory() -> URL { work.appendingPathComponent("c\(cacheNumber.withLock { $0 += 1; return $0 })") }
/// A manager over a fresh, empty cache (its own directory) and a counting loader.
func freshManager() -> (ImageManager, CountingLoader) {
    let loader = CountingLoader()
    let cache = ImageCache(namespace: "bench", directory: freshDirectory(),
                           config: ImageCacheConfig(cleanupInterval: nil))
    return (ImageManager(cache: cache, loaders: ImageLoaders([loader]), configuration: unlimited), loader)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
/// The manager of the 1,000-callers figures (see concurrentCallers), and its round counter.
let coalescingManager = freshManager()
let roundNumber = Mutex(0)
/// The loader of the no-library floor beside those figures.
let floorLoader = HTTPImageLoader()

// WEBIMAGE_TIMELINE=1: medians over ROUNDS (default 20) of when the transfer starts and ends and
// when the first and the last of 1,000 callers of one uncached URL return (ms from the start); then exits.
if ProcessInfo.processInfo.environment["WEBIMAGE_TIMELINE"] != nil {
    var table: [String: [Double]] = [:]
    let rounds = Int(ProcessInfo.processInfo.environment["ROUNDS"] ?? "") ?? 20
    let (manager, loader) = coalescingManager
    for i in 0..<rounds {
        let url = URL(string: "\(base)/photo-1024x768.webp?timeline-\(i)")!
        loader.times.withLock { $0 = [] }
        let timeline = Timeline()
        let start = clock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<1000 { group.addTask { let w = try await manager.image(for: url).width; timeline.mark("first"); return w } }
            timeline.mark("spawned")
            for try await _ in group {}
        }
        let end = clock.now
        let times = loader.times.withLock { $0 }
        for (name, instant) in [("transfer start", times.first), ("transfer end", times.last), ("spawned", timeline.first("spawned")),
                                ("first caller done", timeline.first("first")), ("all done", end)] {
            if let instant { table[name, default: []].append(ms(instant - start)) }
        }
        await manager.waitForPendingStores()
        await manager.cache.clear(.memory)
        // The no-library floor of the same round, marked the same way.
        let floorURL = URL(string: "\(base)/photo-1024x768.webp?timeline-floor-\(i)")!
        let floorline = Timeline()
        let gate = Gate(size: 1001)
        let floorStart = clock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                floorline.mark("transfer start")
                let data = try await floorLoader.data(for: ImageLoaderRequest(url: floorURL)).0
                floorline.mark("transfer end")
                let width = try Image(data: data).width
                floorline.mark("decoded")
                await gate.wait()
                return width
            }
            for _ in 0..<1000 { group.addTask { await gate.wait(); floorline.mark("first"); return 0 } }
            floorline.mark("spawned")
            for try await _ in group {}
        }
        let floorEnd = clock.now
        for (name, instant) in [("floor transfer start", floorline.first("transfer start")), ("floor transfer end", floorline.first("transfer end")),
                                ("floor spawned", floorline.first("spawned")), ("floor decoded", floorline.first("decoded")),
                                ("floor first waiter done", floorline.first("first")), ("floor all done", floorEnd)] {
            if let instant { table[name, default: []].append(ms(instant - floorStart)) }
        }
    }
    print(["transfer start", "transfer end", "spawned", "first caller done", "all done"].map { "\($0) \(f(median(table[$0] ?? [0])))" }.joined(separator: "; "))
    print(["floor transfer start", "floor transfer end", "floor spawned", "floor decoded", "floor first waiter done", "floor all done"]
        .map { "\($0) \(f(median(table[$0] ?? [0])))" }.joined(separator: "; "))
    finishMode()
}

// WEBIMAGE_FANOUT=1: 1,000 callers of one URL whose loader answers after 20 ms with a tiny PNG,
// against 1,000 tasks waiting 20 ms for one event: the cost of sharing, without I/O or decoding.
if ProcessInfo.processInfo.environment["WEBIMAGE_FANOUT"] != nil {
    final class SlowMemoryLoader: ImageLoader {
        let body = smallBlobs[0]
        func canLoad(_ url: URL) -> Bool { url.scheme == "mem" }
        func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
            AsyncThrowingStream { $0.finish(throwing: ImageError.invalidURL("streaming not used")) }
        }
        func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) {
            try await Task.sleep(for: .milliseconds(20))
            return (body, ImageLoaderResponse(statusCode: 200, headers: [:], expectedContentLength: nil, url: request.url))
        }
    }
    let loops = Int(ProcessInfo.processInfo.environment["WEBIMAGE_FANOUT"] ?? "") ?? 7
    for i in 0..<loops {
        let manager = ImageManager(cache: ImageCache(namespace: "f", directory: freshDirectory(), config: .init(cleanupInterval: nil)),
                                   loaders: ImageLoaders([SlowMemoryLoader()]), configuration: unlimited)
        let url = URL(string: "mem:/x\(i).jpg")!
        let shared = ms(try await clock.measure {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<1000 { group.addTask { try await manager.image(for: url).width } }
                for try await _ in group {}
            }
        })
        let one = ms(try await clock.measure { _ = try await manager.image(for: URL(string: "mem:/y\(i).jpg")!) })
        let gate = Gate(size: 1001)
        let floor = ms(await clock.measure {
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<1000 { group.addTask { await gate.wait(); return true } }
                group.addTask { try? await Task.sleep(for: .milliseconds(20)); await gate.wait(); return true }
                for await _ in group {}
            }
        })
        if loops < 50 { print("1,000 shared \(f(shared)) ms; one call \(f(one)) ms; 1,000 waiting on a 20 ms event \(f(floor)) ms") }
    }
    finishMode()
}

// WEBIMAGE_PHASES=N: the two halves of sharing, without I/O. 1,000 callers of a load whose loader
// holds its answer until released by a task spawned after them: "join" is how long until that task
// runs (every caller has joined), "release" from then to the last return; beside 1,000 bare tasks
// waiting for a job as long as one call's decode. Prints the medians of N rounds and exits.
/// A loader that answers (a small JPEG) only after `release()`.
final class HeldLoader: ImageLoader {
    let body = smallBlobs[0]
    let state = Mutex<(released: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
    func canLoad(_ url: URL) -> Bool { url.scheme == "mem" }
    func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        AsyncThrowingStream { $0.finish(throwing: ImageError.invalidURL("streaming not used")) }
    }
    func release() {
        let waiting = state.withLock { state in
            defer { state = (true, []) }
            return state.waiting
        }
        for waiter in waiting { waiter.resume() }
    }
    func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if !state.released { state.waiting.append(continuation) }
                return state.released
            }
            if now { continuation.resume() }
        }
        return (body, ImageLoaderResponse(statusCode: 200, headers: [:], expectedContentLength: nil, url: request.url))
    }
}
func phases(_ rounds: Int) async throws {
    var joins: [Double] = [], releases: [Double] = [], bareJoins: [Double] = [], bareReleases: [Double] = [], ones: [Double] = []
    func heldManager() -> (ImageManager, HeldLoader) {
        let loader = HeldLoader()
        let cache = ImageCache(namespace: "p", directory: freshDirectory(), config: .init(cleanupInterval: nil))
        return (ImageManager(cache: cache, loaders: ImageLoaders([loader]), configuration: unlimited), loader)
    }
    for i in 0..<rounds {
        // One call: from the release to its return (the decode).
        let (alone, aloneLoader) = heldManager()
        let call = Task { try await alone.image(for: URL(string: "mem:/one-\(i).jpg")!).width }
        try await Task.sleep(for: .milliseconds(2))
        let released = clock.now
        aloneLoader.release()
        _ = try await call.value
        ones.append(ms(clock.now - released))
        // 1,000 callers.
        let (manager, loader) = heldManager()
        let url = URL(string: "mem:/many-\(i).jpg")!
        let marks = Timeline()
        var start = clock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<1000 { group.addTask { try await manager.image(for: url).width } }
            group.addTask { marks.mark("joined"); loader.release(); return 0 }
            for try await _ in group {}
        }
        var end = clock.now
        joins.append(ms(marks.first("joined")! - start))
        releases.append(ms(end - marks.first("joined")!))
        // 1,000 bare tasks waiting for a job as long as the decode.
        let gate = Gate(size: 1001)
        let bareMarks = Timeline()
        let jobMs = ones.last!
        start = clock.now
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<1000 { group.addTask { await gate.wait(); return true } }
            group.addTask {
                bareMarks.mark("joined")
                let end = clock.now + .microseconds(Int64(jobMs * 1000))
                while clock.now < end {}
                await gate.wait()
                return true
            }
            for await _ in group {}
        }
        end = clock.now
        bareJoins.append(ms(bareMarks.first("joined")! - start))
        bareReleases.append(ms(end - bareMarks.first("joined")!))
    }
    print("join \(f(median(joins))) ms (bare tasks \(f(median(bareJoins)))); release to last return \(f(median(releases))) ms "
          + "(bare tasks \(f(median(bareReleases))); one call \(f(median(ones))))")
}
if let rounds = ProcessInfo.processInfo.environment["WEBIMAGE_PHASES"].flatMap({ Int($0) }) {
    try await phases(rounds)
    finishMode()
}

/// The floor with no library: one task that downloads `url` with the HTTP loader and decodes
/// it, and `waiters` tasks in the same group that wait for it (spawned after it).
func transferDecodeFloor(_ url: URL, waiters: Int, loader: HTTPImageLoader) async throws -> Double {
    let gate = Gate(size: waiters + 1)
    return ms(try await clock.measure {
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                let width = try Image(data: try await loader.data(for: ImageLoaderRequest(url: url)).0).width
                await gate.wait()
                return width
            }
            for _ in 0..<waiters { group.addTask { await gate.wait(); return 0 } }
            for try await _ in group {}
        }
    })
}

// WEBIMAGE_COALESCE=N: N rounds of one call and 1,000 callers of one uncached WebP, interleaved with
// the no-library floor; prints the medians and exits.
if let rounds = ProcessInfo.processInfo.environment["WEBIMAGE_COALESCE"].flatMap({ Int($0) }) {
    var single: [Double] = [], shared: [Double] = [], alone: [Double] = [], crowd: [Double] = []
    let loader = floorLoader
    for i in 0..<rounds {
        single.append(try await concurrentCallers(URL(string: "\(base)/photo-1024x768.webp?\(i)-one")!, callers: 1).0)
        shared.append(try await concurrentCallers(URL(string: "\(base)/photo-1024x768.webp?\(i)-many")!, callers: 1000).0)
        alone.append(try await transferDecodeFloor(URL(string: "\(base)/photo-1024x768.webp?\(i)-floor1")!, waiters: 0, loader: loader))
        crowd.append(try await transferDecodeFloor(URL(string: "\(base)/photo-1024x768.webp?\(i)-floor1000")!, waiters: 1000, loader: loader))
    }
    let (s1, s2, f1, f2) = (median(single), median(shared), median(alone), median(crowd))
    let paired = Spread(samples: shared).ratios(over: Spread(samples: single))
        .ratios(over: Spread(samples: crowd).ratios(over: Spread(samples: alone)))
    print("one call \(f(s1)) ms; 1,000 callers \(f(s2)) ms; \(f(s2 / s1))x | no library \(f(f1)) -> \(f(f2)) ms; \(f(f2 / f1))x | excess over floor \(f(s2 - s1 - (f2 - f1))) ms | ours over the floor, paired \(paired.text)x")
    finishMode()
}

// WEBIMAGE_OVERHEAD=N: N interleaved rounds of the pipeline without caches and the hand-written
// loop; prints the medians and exits. WEBIMAGE_OVERHEAD_ONLY=a,b runs only the named sides, among
// them the diagnostic ones: `handover` (each load and decode in a task of its own whose image the
// caller takes), `transferover` (each load in a task of its own, decoded by the caller),
// `widthover` (each load and decode in a task of its own that hands over the width only) and
// `handadmitted` (the hand-written loop with at most `maximumConcurrentLoads` loads at once).
if let rounds = ProcessInfo.processInfo.environment["WEBIMAGE_OVERHEAD"].flatMap({ Int($0) }) {
    let sides: [(name: String, run: () async throws -> Double)] = [
        ("pipeline", pipelineWithoutCaches), ("hand", handWritten), ("handover", handWrittenHandedOver),
        ("transferover", handWrittenTransferHandedOver), ("widthover", handWrittenWidthHandedOver),
        ("handadmitted", handWrittenAdmitted),
    ]
    let only = ProcessInfo.processInfo.environment["WEBIMAGE_OVERHEAD_ONLY"].map { Set($0.split(separator: ",").map(String.init)) }
    let chosen = sides.filter { only?.contains($0.name) ?? ($0.name == "pipeline" || $0.name == "hand") }
    var times = [String: [Double]]()
    for _ in 0..<rounds {
        for side in chosen { times[side.name, default: []].append(try await side.run()) }
    }
    let hand = times["hand"].map(median)
    print(chosen.map { side in
        let ms = median(times[side.name]!)
        return "\(side.name) \(f(ms)) ms" + (hand.map { side.name == "hand" ? "" : " (\(f(ms / $0))x by hand)" } ?? "")
    }.joined(separator: "; "))
    finishMode()
}

/// The median time of one memory hit through `image(for:)`, from a non-main task: 2,000 batches
/// of 100 calls, each batch timed once (timing every call adds the clock's own cost, two reads
/// and a conversion, to each figure: `perCall` gives that figure too, from 200,000 calls).
func memoryHitNs(_ manager: ImageManager, _ url: URL, perCall: Bool = false) async throws -> Double {
    try await Task.detached {
        if perCall {
            var samples = [Double](repeating: 0, count: 200_000)
            for index in samples.indices {
                let start = clock.now
                _ = try await manager.image(for: url)
                samples[index] = ms(clock.now - start) * 1e6
            }
            return median(samples)
        }
        var batches = [Double](repeating: 0, count: 2_000)
        for index in batches.indices {
            let start = clock.now
            for _ in 0..<100 { _ = try await manager.image(for: url) }
            batches[index] = ms(clock.now - start) * 1e4
        }
        return median(batches)
    }.value
}

/// The median time of one look-up of `url`'s entry in `manager`'s memory cache alone (one locked
/// look-up, no suspension), timed as `memoryHitNs` times a hit: the memory-hit row's floor.
func memoryCacheAloneNs(_ manager: ImageManager, _ url: URL) async -> Double {
    await Task.detached {
        let cache = manager.cache as! ImageCache
        let key = url.absoluteString
        var batches = [Double](repeating: 0, count: 2_000)
        for index in batches.indices {
            let start = clock.now
            for _ in 0..<100 { _ = cache.memory.image(forKey: key) }
            batches[index] = ms(clock.now - start) * 1e4
        }
        return median(batches)
    }.value
}

// Instruction counts (Benchmarks/instructions.sh): 1,000 memory hits through image(for:), and
// through the memory cache alone, from a non-main task; the image is put in memory directly, so
// no server is needed.
if InstructionCount.isListing || InstructionCount.isCounting {
    let name = "memory hit through image(for:), 1,000 calls"
    if wantsRow(name) {
        let (manager, _) = freshManager()
        let url = smallURLs[0], key = smallURLs[0].absoluteString
        let memory = (manager.cache as! ImageCache).memory
        memory.setImage(try Image(data: smallBlobs[0]), forKey: key)
        _ = try await Task.detached {
            try await InstructionCount.handle(name, sides: [
                { for _ in 0..<1000 { _ = try await manager.image(for: url) } },
                { for _ in 0..<1000 { guard memory.image(forKey: key) != nil else { fatalError("no memory hit") } } },
            ]) { try? FileManager.default.removeItem(at: work) }
        }.value
    }
    let taskName = "memory hit through an ImageTask, 1,000 calls (floor: image(for:))"
    if wantsRow(taskName) {
        // The task object over the same hit: made, then awaited, beside the plain call.
        let (manager, _) = freshManager()
        let url = smallURLs[0], key = smallURLs[0].absoluteString
        (manager.cache as! ImageCache).memory.setImage(try Image(data: smallBlobs[0]), forKey: key)
        _ = try await Task.detached {
            try await InstructionCount.handle(taskName, sides: [
                { for _ in 0..<1000 { _ = try await manager.imageTask(for: url).image } },
                { for _ in 0..<1000 { _ = try await manager.image(for: url) } },
            ]) { try? FileManager.default.removeItem(at: work) }
        }.value
    }
    let crowdName = "1,000 concurrent image(for:) of one uncached 1024x768 WebP, from memory"
    if wantsRow(crowdName) {
        // A loader that answers from memory: the row counts the pipeline, not a transfer.
        let webp = run.load("photo-1024x768.webp")
        let loader = MemoryLoader(body: webp)
        let manager = ImageManager(cache: ImageCache(namespace: "count", directory: freshDirectory(), config: ImageCacheConfig(cleanupInterval: nil)),
                                   loaders: ImageLoaders([loader]), configuration: unlimited)
        let round = Mutex(0)
        // The floor: one task loads the same bytes from the same loader and decodes them, while
        // 1,000 tasks in the same group wait for it (as the timed floor does).
        func floor() async throws {
            let gate = Gate(size: 1001)
            try await withThrowingTaskGroup(of: Int.self) { group in
                group.addTask {
                    let width = try Image(data: try await loader.data(for: ImageLoaderRequest(url: URL(string: "memory://floor")!)).0).width
                    await gate.wait()
                    return width
                }
                for _ in 0..<1000 { group.addTask { await gate.wait(); return 0 } }
                for try await _ in group {}
            }
        }
        func ours() async throws {
            let url = URL(string: "memory://photo.webp?\(round.withLock { $0 += 1; return $0 })")!
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<1000 { group.addTask { try await manager.image(for: url).width } }
                for try await _ in group {}
            }
            precondition(loader.count.withLock { $0 } == round.withLock { $0 }, "not one load per round")
            await manager.waitForPendingStores()
            await manager.cache.clear(.memory)
        }
        try await InstructionCount.handle(crowdName, sides: [ours, floor]) { try? FileManager.default.removeItem(at: work) }
    }
    let overheadName = "pipeline overhead: 1,000 small JPEGs through image(for:) without caches, from a loader in memory"
    if wantsRow(overheadName) {
        // The timed row's two sides over a loader that answers from memory at once: the count is
        // the pipeline's own instructions beside the hand-written load-then-decode, without the
        // transfer (the same in both) and without the machine's scheduling, which the timed
        // row includes.
        let loader = SmallBlobLoader()
        let manager = ImageManager(cache: ImageCache(namespace: "count", directory: freshDirectory(), config: ImageCacheConfig(cleanupInterval: nil)),
                                   loaders: ImageLoaders([loader]), configuration: unlimited)
        let context: ImageContext = {
            var context = ImageContext()
            context.storeCacheType = ImageCacheType.none
            return context
        }()
        let urls = (0..<smallBlobs.count).map { URL(string: String(format: "smallmem:/%04d.jpg", $0))! }
        func each(_ perURL: @escaping @Sendable (URL) async throws -> Int) async throws {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for url in urls { group.addTask { try await perURL(url) } }
                for try await _ in group {}
            }
        }
        try await InstructionCount.handle(overheadName, sides: [
            { try await each { url in try await manager.image(for: url, options: .fromLoaderOnly, context: context).width } },
            { try await each { url in try Image(data: try await loader.data(for: ImageLoaderRequest(url: url)).0).width } },
        ]) { try? FileManager.default.removeItem(at: work) }
    }
    if InstructionCount.isCounting { fatalError("no manager row named \(ProcessInfo.processInfo.environment["WEBIMAGE_COUNT_ROW"] ?? "")") }
    exit(0)
}

// WEBIMAGE_HITS=N: N rounds of memory hits through image(for:) (memoryHitNs); prints the median
// of the rounds' medians and their spread, and exits.
if let rounds = ProcessInfo.processInfo.environment["WEBIMAGE_HITS"].flatMap({ Int($0) }) {
    let (manager, _) = freshManager()
    _ = try await manager.image(for: smallURLs[0])
    var medians: [Double] = []
    var perCall: [Double] = []
    var alone: [Double] = []
    for _ in 0..<rounds {
        medians.append(try await memoryHitNs(manager, smallURLs[0]))
        perCall.append(try await memoryHitNs(manager, smallURLs[0], perCall: true))
        alone.append(await memoryCacheAloneNs(manager, smallURLs[0]))
    }
    let metrics = ProcessInfo.processInfo.environment["WEBIMAGE_METRICS"] ?? "none"
    print("memory hit through image(for:), metrics backend \(metrics): median \(f(median(medians))) ns "
          + "(rounds \(f(medians.min()!))-\(f(medians.max()!)) ns, \(rounds) x 2,000 batches of 100); "
          + "each call timed: \(f(median(perCall))) ns (\(f(perCall.min()!))-\(f(perCall.max()!))); "
          + "the memory cache alone, the same rounds: \(f(median(alone))) ns (\(f(median(medians) / median(alone)))x)")
    finishMode()
}

// WEBIMAGE_PROFILE=coalescing|memory loops one part for a profiler and exits.
if let part = ProcessInfo.processInfo.environment["WEBIMAGE_PROFILE"] {
    let url = URL(string: "\(base)/photo-1024x768.webp")!
    let (manager, _) = freshManager()
    for i in 0..<200 {
        if part == "memory" {
            _ = try await manager.image(for: url)
            for _ in 0..<10_000 { _ = try await manager.image(for: url) }
        } else {
            let (fresh, _) = freshManager()
            let url = URL(string: "\(base)/photo-1024x768.webp?\(i)")!
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<1000 { group.addTask { try await fresh.image(for: url).width } }
                for try await _ in group {}
            }
        }
        if i == 0 { print("profiling \(part)") }
    }
    finishMode()
}

// WEBIMAGE_E2E=N: N interleaved rounds of 1,000 small JPEGs end to end and its three stages
// alone (WEBIMAGE_E2E_ONLY=end|stages runs one side, for a profiler); prints the medians and exits.
if let rounds = ProcessInfo.processInfo.environment["WEBIMAGE_E2E"].flatMap({ Int($0) }) {
    let only = ProcessInfo.processInfo.environment["WEBIMAGE_E2E_ONLY"]
    var ends: [Double] = [], sums: [Double] = [], diskOnly: [Double] = []
    for _ in 0..<rounds {
        ends.append(only == "stages" ? 0 : try await endToEnd())
        guard only != "end" else { sums.append(0); diskOnly.append(0); continue }
        let load = try await loaderAlone()
        let kept = try await decodeAndStoreKeeping()
        sums.append(load + kept.decode + kept.store)
        // A profiled side (WEBIMAGE_E2E_ONLY) runs only the stages it is compared with.
        diskOnly.append(only != nil ? 0 : load + (try await decodeAlone()) + (try await storeAlone()))
    }
    let paired = Spread(samples: ends).ratios(over: Spread(samples: sums))
    print("end to end \(f(median(ends))) ms; loader + decode + store (memory and disk) alone \(f(median(sums))) ms; "
          + "\(f(median(ends) / median(sums)))x; paired \(paired.text)x; "
          + "over loader + decode + disk store alone (\(f(median(diskOnly))) ms) \(f(median(ends) / median(diskOnly)))x")
    finishMode()
}


// 1. Memory hit through image(for:), each call timed, from a non-main task; beside it the
//    memory cache alone (one locked look-up, no suspension).
let (hotManager, _) = freshManager()
_ = try await hotManager.image(for: smallURLs[0])
let hitNs = try await memoryHitNs(hotManager, smallURLs[0])
let hitPerCallNs = try await memoryHitNs(hotManager, smallURLs[0], perCall: true)
let cacheOnlyNs = await memoryCacheAloneNs(hotManager, smallURLs[0])

// 2. 1,000 concurrent image(for:) of one uncached URL, against one load of it. One long-lived
//    manager, as a program has (a fresh one per round would time its threads starting and a new
//    connection); each round asks for a URL not asked before (a new query string).
/// `callers` concurrent calls of `url` + a new query string; the time and the requests it took.
func concurrentCallers(_ url: URL, callers: Int) async throws -> (Double, Int) {
    let (manager, loader) = coalescingManager
    let round = roundNumber.withLock { $0 += 1; return $0 }
    let url = URL(string: url.absoluteString + (url.query == nil ? "?" : "&") + "round=\(round)")!
    let before = loader.count.withLock { $0 }
    let elapsed = try await clock.measure {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<callers { group.addTask { try await manager.image(for: url).width } }
            for try await _ in group {}
        }
    }
    let requests = loader.count.withLock { $0 } - before
    // Not timed: the disk write finishes and memory is emptied before the next round.
    await manager.waitForPendingStores()
    await manager.cache.clear(.memory)
    return (ms(elapsed), requests)
}
/// A loader that answers every request with `body` from memory (for instruction counts, which
/// should not count a transfer), counting its loads.
final class MemoryLoader: ImageLoader {
    let body: Data
    let count = Mutex(0)
    init(body: Data) { self.body = body }
    func canLoad(_ url: URL) -> Bool { url.scheme == "memory" }
    func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        count.withLock { $0 += 1 }
        let body = body
        return AsyncThrowingStream { continuation in
            continuation.yield(.response(ImageLoaderResponse(statusCode: 200, headers: ["content-type": "image/webp"],
                                                             expectedContentLength: Int64(body.count), url: request.url)))
            continuation.yield(.data(body))
            continuation.finish()
        }
    }
}

/// The 1,000 small JPEGs from memory (`smallmem:/0042.jpg`), answered at once (the instruction
/// row of the pipeline overhead).
final class SmallBlobLoader: ImageLoader {
    func canLoad(_ url: URL) -> Bool { url.scheme == "smallmem" }
    func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        let answer = Result { try self.answer(request.url) }
        return AsyncThrowingStream { continuation in
            switch answer {
            case .success(let (body, response)):
                continuation.yield(.response(response))
                continuation.yield(.data(body))
                continuation.finish()
            case .failure(let error): continuation.finish(throwing: error)
            }
        }
    }
    func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) { try answer(request.url) }
    private func answer(_ url: URL) throws -> (Data, ImageLoaderResponse) {
        guard let index = Int(url.lastPathComponent.prefix(4)), smallBlobs.indices.contains(index) else { throw ImageError.invalidURL(url.absoluteString) }
        let body = smallBlobs[index]
        return (body, ImageLoaderResponse(statusCode: 200, headers: ["content-type": "image/jpeg"], expectedContentLength: Int64(body.count), url: url))
    }
}

/// Lets 1,000 waiters go at once when the last one arrives.
final class Gate: Sendable {
    let waiting = Mutex<[CheckedContinuation<Void, Never>]>([])
    let size: Int
    init(size: Int) { self.size = size }
    func wait() async {
        await withCheckedContinuation { continuation in
            let all = waiting.withLock { waiting -> [CheckedContinuation<Void, Never>] in
                waiting.append(continuation)
                guard waiting.count == size else { return [] }
                defer { waiting = [] }
                return waiting
            }
            for waiter in all { waiter.resume() }
        }
    }
}

/// For each case, rounds that interleave one call, 1,000 callers, and the no-library floor alone
/// and with 1,000 waiting tasks (medians of 41 each: a round is about 25 ms, and the medians of
/// 15 moved by 5-10 % between runs of the same build).
var coalescing: [(label: String, single: Double, shared: Double, requests: Int, alone: Double, crowd: Double, paired: Spread)] = []
for (label, path) in [("12 KB JPEG", "small/0000.jpg"), ("1024x768 WebP", "photo-1024x768.webp")] {
    let url = URL(string: "\(base)/\(path)")!
    _ = try await concurrentCallers(url, callers: 1)
    _ = try await transferDecodeFloor(url, waiters: 0, loader: floorLoader)
    var single: [Double] = [], shared: [Double] = [], alone: [Double] = [], crowd: [Double] = [], requests = 0
    for i in 0..<41 {
        single.append(try await concurrentCallers(url, callers: 1).0)
        let (time, count) = try await concurrentCallers(url, callers: 1000)
        shared.append(time)
        requests = max(requests, count)
        alone.append(try await transferDecodeFloor(URL(string: "\(base)/\(path)?floor-\(i)-1")!, waiters: 0, loader: floorLoader))
        crowd.append(try await transferDecodeFloor(URL(string: "\(base)/\(path)?floor-\(i)-1000")!, waiters: 1000, loader: floorLoader))
    }
    // Paired: each round's ratio (1,000 callers over one call) over the floor's ratio in the same round.
    let ours = Spread(samples: shared).ratios(over: Spread(samples: single))
    let floor = Spread(samples: crowd).ratios(over: Spread(samples: alone))
    coalescing.append((label, median(single), median(shared), requests, median(alone), median(crowd), ours.ratios(over: floor)))
}

// 3. 1,000 distinct small JPEGs end to end (download, decode, store on disk), against the
//    loader alone, decoding alone and storing alone.
func endToEnd() async throws -> Double {
    let (manager, _) = freshManager()
    return try await eachSmallURL { url in try await manager.image(for: url, options: .waitStoreCache).width }
}
/// The milliseconds `perURL` takes over the 1,000 small JPEGs' URLs, one task per URL in a
/// task group (every side of the end-to-end and overhead rows runs this way).
func eachSmallURL(_ perURL: @escaping @Sendable (URL) async throws -> Int) async throws -> Double {
    ms(try await clock.measure {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for url in smallURLs { group.addTask { try await perURL(url) } }
            for try await _ in group {}
        }
    })
}
/// Through the pipeline with the caches out of the way (no query, no store), over the same
/// loader as `handWritten` (not the counting wrapper: its locks and clock reads are the
/// benchmark's, not the pipeline's).
func pipelineWithoutCaches() async throws -> Double {
    let cache = ImageCache(namespace: "bench", directory: freshDirectory(), config: ImageCacheConfig(cleanupInterval: nil))
    let manager = ImageManager(cache: cache, loaders: ImageLoaders([HTTPImageLoader()]), configuration: unlimited)
    let context: ImageContext = {
        var context = ImageContext()
        context.storeCacheType = ImageCacheType.none
        return context
    }()
    return try await eachSmallURL { url in try await manager.image(for: url, options: .fromLoaderOnly, context: context).width }
}
/// The same two stages written by hand: load, then decode, in one task per URL.
func handWritten() async throws -> Double {
    let loader = HTTPImageLoader()
    return try await eachSmallURL { url in try Image(data: try await loader.data(for: ImageLoaderRequest(url: url)).0).width }
}
/// The same, with each load and decode in a task of its own whose image the caller's task
/// takes and drops, as the pipeline's work hands its image to its caller (a diagnostic side of
/// `WEBIMAGE_OVERHEAD`: what handing an image between tasks costs by itself).
func handWrittenHandedOver() async throws -> Double {
    let loader = HTTPImageLoader()
    return try await eachSmallURL { url in
        try await Task { try Image(data: try await loader.data(for: ImageLoaderRequest(url: url)).0) }.value.width
    }
}
/// The same, with each load in a task of its own whose bytes the caller's task takes and
/// decodes (a diagnostic side of `WEBIMAGE_OVERHEAD`: a caller that decodes what a shared
/// transfer hands it).
func handWrittenTransferHandedOver() async throws -> Double {
    let loader = HTTPImageLoader()
    return try await eachSmallURL { url in
        try Image(data: try await Task { try await loader.data(for: ImageLoaderRequest(url: url)).0 }.value).width
    }
}
/// The hand-written loop with at most as many loads at once as the manager admits
/// (`maximumConcurrentLoads`, 64 by default): a task starts for the next URL when one ends, as a
/// slot passes to the next waiting work (a diagnostic side of `WEBIMAGE_OVERHEAD`: what the
/// admission policy costs by itself).
func handWrittenAdmitted() async throws -> Double {
    let loader = HTTPImageLoader()
    let limit = unlimited.maximumConcurrentLoads
    return ms(try await clock.measure {
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = smallURLs.startIndex
            func add() {
                let url = smallURLs[next]
                group.addTask { try Image(data: try await loader.data(for: ImageLoaderRequest(url: url)).0).width }
                next += 1
            }
            while next < smallURLs.endIndex && next < limit { add() }
            while try await group.next() != nil {
                if next < smallURLs.endIndex { add() }
            }
        }
    })
}
/// The same, with each load and decode in a task of its own that hands over the width only
/// (a diagnostic side of `WEBIMAGE_OVERHEAD`: the task hop without the image crossing threads).
func handWrittenWidthHandedOver() async throws -> Double {
    let loader = HTTPImageLoader()
    return try await eachSmallURL { url in
        try await Task { try Image(data: try await loader.data(for: ImageLoaderRequest(url: url)).0).width }.value
    }
}
func loaderAlone() async throws -> Double {
    let loader = HTTPImageLoader()
    return try await eachSmallURL { url in try await loader.data(for: ImageLoaderRequest(url: url)).0.count }
}
func decodeAlone() async throws -> Double {
    ms(try await clock.measure {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for blob in smallBlobs { group.addTask { try Image(data: blob).width } }
            for try await _ in group {}
        }
    })
}
/// Decoding that keeps its images, as the pipeline does when it stores them in memory: each
/// bitmap takes fresh pages instead of the ones the previous image freed. The time, and the images.
func decodeKeeping() async throws -> (Double, [Image]) {
    var images = [Image?](repeating: nil, count: smallBlobs.count)
    let elapsed = try await clock.measure {
        try await withThrowingTaskGroup(of: (Int, Image).self) { group in
            for (i, blob) in smallBlobs.enumerated() { group.addTask { (i, try Image(data: blob)) } }
            for try await (i, image) in group { images[i] = image }
        }
    }
    return (ms(elapsed), images.map { $0! })
}
/// The store stage as SDWebImage's default store cache type (`.all`) does it: each image into
/// the memory cache and its data onto disk, through `ImageCache`.
func storeInMemoryAndOnDisk(_ images: [Image]) async throws -> Double {
    let cache = ImageCache(namespace: "bench", directory: freshDirectory(), config: ImageCacheConfig(cleanupInterval: nil))
    return ms(try await clock.measure {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, blob) in smallBlobs.enumerated() {
                group.addTask { try await cache.store(images[i], data: blob, forKey: smallURLs[i].absoluteString, to: .all) }
            }
            for try await _ in group {}
        }
    })
}
/// Decode keeping the images, then store them in memory and on disk: the two stages the pipeline
/// runs after the transfer, each timed alone.
func decodeAndStoreKeeping() async throws -> (decode: Double, store: Double) {
    let (decode, images) = try await decodeKeeping()
    return (decode, try await storeInMemoryAndOnDisk(images))
}
func storeAlone() async throws -> Double {
    let disk = DiskCache(directory: freshDirectory(), configuration: .init(cleanupInterval: nil))
    return ms(try await clock.measure {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, blob) in smallBlobs.enumerated() { group.addTask { try await disk.store(blob, forKey: smallURLs[i].absoluteString) } }
            for try await _ in group {}
        }
    })
}
_ = try await endToEnd(); _ = try await loaderAlone(); _ = try await decodeAlone()
var e2e: [Double] = [], loads: [Double] = [], decodes: [Double] = [], stores: [Double] = [], bare: [Double] = [], hand: [Double] = [], admitted: [Double] = []
var keptDecodes: [Double] = [], keptStores: [Double] = []
// 15 rounds (a round is under a second; the medians of 7 moved by 5-10 % between runs of one build).
for _ in 0..<15 {
    e2e.append(try await endToEnd())
    loads.append(try await loaderAlone())
    decodes.append(try await decodeAlone())
    stores.append(try await storeAlone())
    let kept = try await decodeAndStoreKeeping()
    keptDecodes.append(kept.decode)
    keptStores.append(kept.store)
    bare.append(try await pipelineWithoutCaches())
    hand.append(try await handWritten())
    admitted.append(try await handWrittenAdmitted())
}
let (endMs, loadMs, decodeMs, storeMs) = (median(e2e), median(loads), median(decodes), median(stores))
let (bareMs, handMs, admittedMs) = (median(bare), median(hand), median(admitted))

print("| manager benchmark | figure | anchor | ratio | target |")
print("| --- | ---: | ---: | ---: | --- |")
print("| memory hit through image(for:), median of 2,000 batches of 100 (each call timed: \(f(hitPerCallNs)) ns) | \(f(hitNs)) ns | \(f(cacheOnlyNs)) ns (memory cache alone, one locked look-up) | \(f(hitNs / cacheOnlyNs))x | < 500 ns |")
for c in coalescing {
    print("| 1,000 concurrent image(for:) of one uncached \(c.label) (\(c.requests) request) | \(f(c.shared)) ms | \(f(c.single)) ms (one call) | \(f(c.shared / c.single))x | <= 1.2x, 1 request |")
    print("| (no library: one task downloads and decodes it, 1,000 tasks wait for it) | \(f(c.crowd)) ms | \(f(c.alone)) ms (no waiters) | \(f(c.crowd / c.alone))x | floor of the ratio above |")
    print("| (ours over the floor: the first ratio over the second, \(f((c.shared / c.single) / (c.crowd / c.alone)))x; paired, round by round) | | | \(c.paired.text)x | 1.05x |")
}
print("| 1,000 small JPEGs end to end (download, decode, store) | \(f(endMs)) ms | \(f(loadMs + decodeMs)) ms (loader \(f(loadMs)) + decode \(f(decodeMs))) | \(f(endMs / (loadMs + decodeMs)))x | ratio reported |")
// The target's anchor: the three stages as the pipeline runs them, with SDWebImage's default
// store cache type (.all): decoding that keeps its images and a store in memory and on disk.
let (keptDecodeMs, keptStoreMs) = (median(keptDecodes), median(keptStores))
let keptSum = loadMs + keptDecodeMs + keptStoreMs
let keptPaired = Spread(samples: e2e).ratios(over: Spread(samples: zip(zip(loads, keptDecodes), keptStores).map { $0.0 + $0.1 + $1 }))
print("| the same against the sum of its three stages (decode keeping the images \(f(keptDecodeMs)) ms, store in memory and on disk \(f(keptStoreMs)) ms) | \(f(endMs)) ms | \(f(keptSum)) ms | \(f(endMs / keptSum))x; paired \(keptPaired.text)x | 1.1x |")
let stagesPaired = Spread(samples: e2e).ratios(over: Spread(samples: zip(zip(loads, decodes), stores).map { $0.0 + $0.1 + $1 }))
print("| (the same against decoding that frees each image and a store on disk only) | \(f(endMs)) ms | \(f(loadMs + decodeMs + storeMs)) ms (+ store \(f(storeMs))) | \(f(endMs / (loadMs + decodeMs + storeMs)))x; paired \(stagesPaired.text)x | ratio reported |")
print("| pipeline overhead: image(for:) without caches vs load-then-decode written by hand | \(f(bareMs)) ms | \(f(handMs)) ms | \(f(bareMs / handMs))x; paired \(Spread(samples: bare).ratios(over: Spread(samples: hand)).text)x | 1.15x |")
// The hand-written loop bounded as the manager bounds its loads (`maximumConcurrentLoads`):
// what the bound costs by itself, apart from the pipeline's own cost.
print("| (the same against the hand-written loop with at most \(unlimited.maximumConcurrentLoads) loads at once, as the manager admits them; that loop over the unbounded one: \(f(admittedMs / handMs))x) | \(f(bareMs)) ms | \(f(admittedMs)) ms | \(f(bareMs / admittedMs))x; paired \(Spread(samples: bare).ratios(over: Spread(samples: admitted)).text)x | ratio reported |")
var usage = rusage()
getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
print("peak RSS of this process after every run above (1,000 small JPEGs x 15 rounds end to end among them): \(usage.ru_maxrss / 1024) MiB")
print("caches in \(work.deletingLastPathComponent().path); machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date())")
try? FileManager.default.removeItem(at: work)   // the caches this run made

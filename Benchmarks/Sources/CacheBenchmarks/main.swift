import BenchSupport
import Foundation
import Synchronization
import WebImage

// Cache benchmarks for issue "caching", beside the disk floor measured by
// ../shared/bench/anchors.sh in the same run. Usage: CacheBenchmarks FIXTURES_DIR [ANCHORS_FILE]

let run = BenchRun(usage: "CacheBenchmarks")
let anchors = run.anchors, fixtures = run.fixtures
let smallFiles = (0..<1000).map { fixtures.appendingPathComponent(String(format: "small/%04d.jpg", $0)) }
let blobs = smallFiles.map { try! Data(contentsOf: $0) }
// WEBIMAGE_BENCH_DIR=/dev/shm runs on tmpfs: the library's overhead without the disk's noise.
let workBase = ProcessInfo.processInfo.environment["WEBIMAGE_BENCH_DIR"].map { URL(fileURLWithPath: $0) }
    ?? FileManager.default.temporaryDirectory
let work = workBase.appendingPathComponent("webimage-cache-bench-\(getpid())")
defer { try? FileManager.default.removeItem(at: work) }

func ms(_ duration: Duration) -> Double { milliseconds(duration) }
func f(_ value: Double) -> String { formatted(value) }
let clock = ContinuousClock()

let floorIO = FloorIO()
func us(_ spread: Spread) -> String { Spread(samples: spread.samples.map { $0 * 1000 }).text }
let storeRound = Mutex(0)

// 2. Disk hit including decode, against reading the same file with FileManager and decoding it.
let diskCache = ImageCache(namespace: "bench", directory: work.appendingPathComponent("disk"),
                           config: ImageCacheConfig(shouldCacheImagesInMemory: false))
for i in 0..<200 { try await diskCache.store(nil, data: blobs[i], forKey: "k\(i)", to: .disk) }
for i in 0..<200 { let path = smallFiles[i].path; _ = FileManager.default.contents(atPath: path) }  // warm
// WEBIMAGE_CACHE_PROFILE=disk loops the disk hits for a profiler and exits.
if ProcessInfo.processInfo.environment["WEBIMAGE_CACHE_PROFILE"] == "disk" {
    await Task.detached {
        for _ in 0..<200 { for i in 0..<200 { _ = await diskCache.image(forKey: "k\(i)", from: .disk) } }
    }.value
    try? FileManager.default.removeItem(at: work); exit(0)
}
// WEBIMAGE_CACHE_PROFILE=store loops stores one at a time for a profiler and exits (store-batch:
// 1,000 submitted together, 20 times).
if ProcessInfo.processInfo.environment["WEBIMAGE_CACHE_PROFILE"] == "store-batch" {
    for round in 0..<20 {
        let cache = DiskCache(directory: work.appendingPathComponent("profile-batch\(round)"))
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<1000 { group.addTask { try? await cache.store(blobs[i], forKey: "key\(i).jpg") } }
        }
    }
    try? FileManager.default.removeItem(at: work); exit(0)
}
// WEBIMAGE_CACHE_PROFILE=floor-batch: the same on the no-library I/O thread, to compare profiles
// (both-batch: ours and the floor in alternate rounds, for one profile of the two threads).
let profileMode = ProcessInfo.processInfo.environment["WEBIMAGE_CACHE_PROFILE"]
if profileMode == "floor-batch" || profileMode == "both-batch" {
    for round in 0..<20 {
        if profileMode == "both-batch" {
            let cache = DiskCache(directory: work.appendingPathComponent("profile-both\(round)"))
            await withTaskGroup(of: Void.self) { group in
                for i in 0..<1000 { group.addTask { try? await cache.store(blobs[i], forKey: "key\(i).jpg") } }
            }
        }
        let io = FloorIO(), path = work.appendingPathComponent("profile-floor\(round)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<1000 { group.addTask { await io.writeThenRename(blobs[i], directory: path, name: String(format: "%04d", i)) } }
        }
    }
    try? FileManager.default.removeItem(at: work); exit(0)
}
if ProcessInfo.processInfo.environment["WEBIMAGE_CACHE_PROFILE"] == "store" {
    await Task.detached {
        let cache = DiskCache(directory: work.appendingPathComponent("profile-store"))
        for round in 0..<20 { for i in 0..<1000 { try? await cache.store(blobs[i], forKey: "key\(round)-\(i).jpg") } }
    }.value
    try? FileManager.default.removeItem(at: work); exit(0)
}

print("Medians of interleaved rounds (ours and its floors in the same rounds), with the rounds' range in brackets.")
print("")
print("| benchmark | ours | floor or anchor | ratio | target |")
print("| --- | ---: | ---: | ---: | --- |")

if wantsRow("memory hit through ImageCache") {
    // 1. Memory hit through ImageCache, from a non-main task: median of 21 batches of 100,000.
    let memoryCache = ImageCache(namespace: "bench", directory: work.appendingPathComponent("memory"))
    let sample = try Image(data: blobs[0])
    try await memoryCache.store(sample, data: nil, forKey: "hot", to: .memory)
    let memoryHitNs: Double = await Task.detached {
        var batches: [Double] = []
        for _ in 0..<21 {
            let elapsed = await clock.measure {
                for _ in 0..<100_000 { _ = await memoryCache.image(forKey: "hot", from: .memory) }
            }
            batches.append(ms(elapsed) * 1e6 / 100_000)
        }
        return batches.sorted()[10]
    }.value

    print("| memory hit through ImageCache (non-main task) | \(f(memoryHitNs)) ns | target < 1000 ns | \(f(memoryHitNs / 1000))x of target | |")
}

if wantsRow("disk hit") {
    // Three ways, from a non-main task, one hit at a time, in interleaved rounds: ours; the same file
    // read (open, fstat, read) and decoded in the task itself, which blocks the cooperative pool;
    // and the no-library floor of a cache that keeps I/O off the pool: the read on a plain I/O
    // thread (FloorIO), awaited, then the decode in the task.
    // 25 rounds: a hit's two thread hand-offs make single rounds spread widely on a VM.
    let diskRoundCount = ProcessInfo.processInfo.environment["WEBIMAGE_DISK_ROUNDS"].flatMap { Int($0) } ?? 25
    let diskRounds: [Spread] = try await Task.detached {
        try await interleaved(rounds: diskRoundCount, [
            { ms(await clock.measure { for i in 0..<200 { _ = await diskCache.image(forKey: "k\(i)", from: .disk) } }) / 200 },
            { ms(clock.measure { for i in 0..<200 { _ = try? Image(data: readFile(smallFiles[i].path)!) } }) / 200 },
            { ms(await clock.measure { for i in 0..<200 { _ = try? Image(data: await floorIO.read(smallFiles[i].path)!) } }) / 200 },
            { ms(await clock.measure { for i in 0..<200 { _ = try? Image(data: await diskCache.disk.data(forKey: "k\(i)")!) } }) / 200 },
        ])
    }.value

    let (hit, inline, ioHit) = (diskRounds[0], diskRounds[1], diskRounds[2])
    print("| disk hit of a 12 KB JPEG, incl. decode, one at a time | \(us(hit)) us | read + decode in the task (blocks the pool) \(us(inline)) us | \(f(hit.median / inline.median))x | 1.1x |")
    print("| (the same against the no-library floor: the read awaited on a plain I/O thread, then the decode) | | \(us(ioHit)) us | \(f(hit.median / ioHit.median))x; paired \(hit.ratios(over: ioHit).text)x | |")
    let diskOnly = diskRounds[3]
    print("| (where the rest goes: the disk cache's own read awaited, then the decode, without the shared-query table) | | \(us(diskOnly)) us | \(f(hit.median / diskOnly.median))x | |")
}

func nextDirectory(_ label: String) -> URL {
    let round = storeRound.withLock { $0 += 1; return $0 }
    let directory = work.appendingPathComponent("\(label)\(round)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}
func writeRenameFloor(_ directory: URL, flags: Int32) -> Double {
    ms(clock.measure {
        for (i, blob) in blobs.enumerated() {
            let temporary = directory.path + "/.\(i).tmp", final = directory.path + String(format: "/%04d", i)
            let fd = open(temporary, flags, 0o644)
            _ = blob.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            rename(temporary, final)
        }
    })
}

if wantsRow("store 1,000") {
    // 3. Store throughput: 1,000 entries of ~12 KB (data given), one at a time (each awaited) and all
    // submitted at once (the I/O thread takes them in batches). In the same interleaved rounds (the
    // disk is shared and its speed drifts): the write-then-rename floor in the task itself (the same
    // syscalls as ../shared/bench, which block the pool), with O_EXCL as ours and O_TRUNC as
    // Python's 'wb'; and the no-library floor that keeps I/O off the pool: each write-then-rename
    // on a plain I/O thread, awaited one at a time, or all submitted at once.
    let storeRounds: [Spread] = try await Task.detached {
        try await interleaved(rounds: 7, [
            { writeRenameFloor(nextDirectory("floor"), flags: O_WRONLY | O_CREAT | O_EXCL) },
            { writeRenameFloor(nextDirectory("trunc"), flags: O_WRONLY | O_CREAT | O_TRUNC) },
            {
                let cache = DiskCache(directory: nextDirectory("store"))
                return ms(try await clock.measure { for i in 0..<1000 { try await cache.store(blobs[i], forKey: "key\(i).jpg") } })
            },
            {
                let batch = DiskCache(directory: nextDirectory("batch"))
                return ms(await clock.measure {
                    await withTaskGroup(of: Void.self) { group in
                        for i in 0..<1000 { group.addTask { try? await batch.store(blobs[i], forKey: "key\(i).jpg") } }
                    }
                })
            },
            {
                let path = nextDirectory("io-serial").path
                return ms(await clock.measure {
                    for i in 0..<1000 { await floorIO.writeThenRename(blobs[i], directory: path, name: String(format: "%04d", i)) }
                })
            },
            {
                let path = nextDirectory("io-batch").path
                return ms(await clock.measure {
                    await withTaskGroup(of: Void.self) { group in
                        for i in 0..<1000 {
                            group.addTask { await floorIO.writeThenRename(blobs[i], directory: path, name: String(format: "%04d", i)) }
                        }
                    }
                })
            },
        ])
    }.value

    let (floorO, floorT, serial, together, ioSerial, ioTogether) = (storeRounds[0], storeRounds[1], storeRounds[2], storeRounds[3], storeRounds[4], storeRounds[5])
    let pythonFloor = anchors["disk_write_rename_1000x12KB"].map { "; anchors.sh (Python, earlier in the run) \(f($0)) ms" } ?? ""
    print("| store 1,000 x 12 KB entries, one at a time | \(serial.text) ms | write-then-rename in the task (O_EXCL, as ours; blocks the pool) \(floorO.text) ms | \(f(serial.median / floorO.median))x | 1.2x |")
    print("| (the same against the no-library floor: each write-then-rename awaited on a plain I/O thread) | | \(ioSerial.text) ms | \(f(serial.median / ioSerial.median))x; paired \(serial.ratios(over: ioSerial).text)x | |")
    print("| store 1,000 x 12 KB entries, submitted together | \(together.text) ms | write-then-rename in the task \(floorO.text) ms | \(f(together.median / floorO.median))x | 1.1x |")
    print("| (the same against the no-library floor: all submitted to a plain I/O thread at once) | | \(ioTogether.text) ms | \(f(together.median / ioTogether.median))x; paired \(together.ratios(over: ioTogether).text)x | |")
    print("| (write-then-rename in the task opened with O_TRUNC, as Python's 'wb') | | \(floorT.text) ms\(pythonFloor) | | |")
}

if wantsRow("cleanup") {
    // 4. Cleanup of 10,000 entries: a fresh cache (index built from the directory) and a warm one.
    func fill(_ directory: URL) async throws -> DiskCache {
        let cache = DiskCache(directory: directory)
        for i in 0..<10_000 { try await cache.store(blobs[i % 1000], forKey: "entry\(i)") }
        return cache
    }
    let expireAll = DiskCache.Configuration(maxAge: .zero)
    _ = try await fill(work.appendingPathComponent("cleanup-cold"))
    let coldCache = DiskCache(directory: work.appendingPathComponent("cleanup-cold"), configuration: expireAll)
    var coldReport: DiskCache.CleanupReport?
    let cold = await clock.measure { coldReport = await coldCache.removeExpiredData() }
    let warmFilled = try await fill(work.appendingPathComponent("cleanup-warm"))
    _ = warmFilled
    let warmCache = DiskCache(directory: work.appendingPathComponent("cleanup-warm"), configuration: expireAll)
    _ = await warmCache.count()    // index built beforehand
    var warmReport: DiskCache.CleanupReport?
    let warm = await clock.measure { warmReport = await warmCache.removeExpiredData() }
    let noop = await clock.measure { _ = await warmCache.removeExpiredData() }

    print("| cleanup of 10,000 entries, new cache (index built) | \(f(ms(cold))) ms | removed \(coldReport?.removedCount ?? 0) | |")
    print("| cleanup of 10,000 entries, index already built | \(f(ms(warm))) ms | removed \(warmReport?.removedCount ?? 0) | |")
    print("| cleanup with nothing to do, 0 entries left | \(f(ms(noop) * 1000)) us | | |")
}

/// Serves the fixture JPEGs as `mem:/NNNN.jpg` from memory, with an origin's caching headers:
/// the manager's rows without a network.
final class MemoryOrigin: ImageLoader {
    let headers: [String: String]
    init(headers: [String: String]) { self.headers = headers }
    func canLoad(_ url: URL) -> Bool { url.scheme == "mem" }
    func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        AsyncThrowingStream { continuation in
            do {
                let (data, response) = try self.body(request)
                continuation.yield(.response(response))
                continuation.yield(.data(data))
                continuation.finish()
            } catch { continuation.finish(throwing: error) }
        }
    }
    func data(for request: ImageLoaderRequest) async throws -> (Data, ImageLoaderResponse) { try body(request) }
    private func body(_ request: ImageLoaderRequest) throws -> (Data, ImageLoaderResponse) {
        guard let index = Int(request.url.deletingPathExtension().lastPathComponent), blobs.indices.contains(index) else {
            throw ImageError.badStatusCode(404, url: request.url)
        }
        let data = blobs[index]
        return (data, ImageLoaderResponse(statusCode: 200, headers: headers, expectedContentLength: Int64(data.count), url: request.url))
    }
    var capabilities: ImageLoaderCapabilities { .local }
}
let memoryURLs = (0..<1000).map { URL(string: String(format: "mem:/%04d.jpg", $0))! }

if wantsRow("disk hit through image(for:)") {
    // A disk hit through the manager (memory kept out), the entry's HTTP freshness read in the
    // same trip and checked (.respectHeaders), against the same hit that ignores it.
    let cache = ImageCache(namespace: "bench", directory: work.appendingPathComponent("http"),
                           config: ImageCacheConfig(shouldCacheImagesInMemory: false, cleanupInterval: nil))
    var configuration = ImageManager.Configuration()
    configuration.rateLimiter = nil
    let manager = ImageManager(cache: cache, loaders: ImageLoaders([MemoryOrigin(headers: ["cache-control": "max-age=31536000", "etag": "\"v1\""])]),
                               configuration: configuration)
    for url in memoryURLs.prefix(200) { _ = try await manager.image(for: url, options: .waitStoreCache) }
    var respect = ImageContext(), ignore = ImageContext()
    respect.httpCachePolicy = .respectHeaders
    ignore.httpCachePolicy = .ignoreHeaders
    let rounds: [Spread] = try await Task.detached {
        try await interleaved(rounds: 15, [
            { ms(try await clock.measure { for url in memoryURLs.prefix(200) { _ = try await manager.image(for: url, context: respect) } }) / 200 },
            { ms(try await clock.measure { for url in memoryURLs.prefix(200) { _ = try await manager.image(for: url, context: ignore) } }) / 200 },
        ])
    }.value
    print("| disk hit through image(for:) with .respectHeaders (12 KB JPEG, freshness read and checked) | \(us(rounds[0])) us | the same hit with .ignoreHeaders \(us(rounds[1])) us | \(f(rounds[0].median / rounds[1].median))x; paired \(rounds[0].ratios(over: rounds[1]).text)x | 1.02x |")
}

if wantsRow("1,000 misses") {
    // Keys that are not on disk: the negative lookup answers on the caller's thread, against the
    // no-library floor of a failed open() on a plain I/O thread, awaited.
    let disk = DiskCache(directory: work.appendingPathComponent("misses"))
    for i in 0..<200 { try await disk.store(blobs[i], forKey: "present\(i)") }
    _ = await disk.data(forKey: "absent")   // the names are listed once
    let missing = work.appendingPathComponent("misses").path
    let rounds: [Spread] = try await Task.detached {
        try await interleaved(rounds: 15, [
            { ms(await clock.measure { for i in 0..<1000 { _ = await disk.data(forKey: "https://example.com/absent/\(i).jpg") } }) },
            { ms(await clock.measure { for i in 0..<1000 { _ = await floorIO.read(missing + "/absent-\(i)") } }) },
        ])
    }.value
    print("| 1,000 misses of absent keys (DiskCache.data) | \(rounds[0].text) ms | 1,000 failed open() awaited on a plain I/O thread \(rounds[1].text) ms | \(f(rounds[0].median / rounds[1].median))x; paired \(rounds[0].ratios(over: rounds[1]).text)x | 0.5x |")
}

if wantsRow("prefetch") {
    // 1,000 small JPEGs prefetched from a local origin into a new cache: to disk only (stored,
    // never decoded) against the decoding prefetch (decoded, in memory and on disk).
    func prefetch(_ destination: ImagePrefetcher.Destination) async -> Double {
        let cache = ImageCache(namespace: "bench", directory: nextDirectory("prefetch"), config: ImageCacheConfig(cleanupInterval: nil))
        var configuration = ImageManager.Configuration()
        configuration.rateLimiter = nil
        let manager = ImageManager(cache: cache, loaders: ImageLoaders([MemoryOrigin(headers: [:])]), configuration: configuration)
        let prefetcher = ImagePrefetcher(manager: manager, maxConcurrentPrefetchCount: 8, destination: destination)
        return ms(await clock.measure { for await _ in prefetcher.prefetch(memoryURLs) {} })
    }
    let rounds: [Spread] = try await Task.detached {
        try await interleaved(rounds: 5, [{ await prefetch(.diskCache) }, { await prefetch(.memoryCache) }])
    }.value
    print("| prefetch 1,000 x 12 KB JPEGs to disk only (never decoded) | \(rounds[0].text) ms | the decoding prefetch (memory and disk) \(rounds[1].text) ms | \(f(rounds[0].median / rounds[1].median))x; paired \(rounds[0].ratios(over: rounds[1]).text)x | |")
}

print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date()), cache files in \(workBase.path)")

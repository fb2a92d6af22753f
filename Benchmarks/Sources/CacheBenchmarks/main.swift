import BenchSupport
import Foundation
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
    exit(0)
}
// Both from a non-main task, one request at a time, alternating rounds.
let (diskHit, directHit): (Double, Double) = await Task.detached {
    var ours: [Double] = [], direct: [Double] = []
    for _ in 0..<7 {
        let a = await clock.measure { for i in 0..<200 { _ = await diskCache.image(forKey: "k\(i)", from: .disk) } }
        let b = clock.measure {
            for i in 0..<200 { _ = try? Image(data: FileManager.default.contents(atPath: smallFiles[i].path)!) }
        }
        ours.append(ms(a) / 200)
        direct.append(ms(b) / 200)
    }
    return (ours.sorted()[3], direct.sorted()[3])
}.value

// 3. Store throughput: 1,000 entries of ~12 KB (data given), against write-then-rename; one
// at a time (each awaited) and all submitted at once (the I/O thread takes them in batches).
// The disk is shared and its speed drifts, so the floor (the same write-then-rename as
// ../shared/bench, in-process with POSIX calls) is measured between our rounds.
func writeRenameFloor(_ directory: URL, flags: Int32) -> Double {
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return ms(clock.measure {
        for (i, blob) in blobs.enumerated() {
            let temporary = directory.path + "/.\(i).tmp", final = directory.path + String(format: "/%04d", i)
            let fd = open(temporary, flags, 0o644)
            _ = blob.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            rename(temporary, final)
        }
    })
}
let (storeMs, storeConcurrentMs, floorMs, truncatingFloorMs): (Double, Double, Double, Double) = try await Task.detached {
    var serial: [Double] = [], concurrent: [Double] = [], floors: [Double] = [], truncating: [Double] = []
    for round in 0..<5 {
        floors.append(writeRenameFloor(work.appendingPathComponent("floor\(round)"), flags: O_WRONLY | O_CREAT | O_EXCL))
        truncating.append(writeRenameFloor(work.appendingPathComponent("trunc\(round)"), flags: O_WRONLY | O_CREAT | O_TRUNC))
        let cache = DiskCache(directory: work.appendingPathComponent("store\(round)"))
        serial.append(ms(try await clock.measure { for i in 0..<1000 { try await cache.store(blobs[i], forKey: "key\(i).jpg") } }))
        let batch = DiskCache(directory: work.appendingPathComponent("batch\(round)"))
        concurrent.append(ms(await clock.measure {
            await withTaskGroup(of: Void.self) { group in
                for i in 0..<1000 { group.addTask { try? await batch.store(blobs[i], forKey: "key\(i).jpg") } }
            }
        }))
    }
    return (serial.sorted()[2], concurrent.sorted()[2], floors.sorted()[2], truncating.sorted()[2])
}.value

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

print("| benchmark | ours | anchor | ratio |")
print("| --- | ---: | ---: | ---: |")
print("| memory hit through ImageCache (non-main task) | \(f(memoryHitNs)) ns | target < 1000 ns | \(f(memoryHitNs / 1000))x of target |")
print("| disk hit of a 12 KB JPEG, incl. decode | \(f(diskHit * 1000)) us | FileManager read + decode \(f(directHit * 1000)) us | \(f(diskHit / directHit))x |")
let pythonFloor = anchors["disk_write_rename_1000x12KB"].map { "; anchors.sh (Python, earlier in the run) \(f($0)) ms" } ?? ""
for (label, value) in [("one at a time", storeMs), ("submitted together", storeConcurrentMs)] {
    print("| store 1,000 x 12 KB entries, \(label) | \(f(value)) ms | write-then-rename floor (O_EXCL, as ours) \(f(floorMs)) ms | \(f(value / floorMs))x |")
}
print("| (same floor opened with O_TRUNC, as Python's 'wb'; ext4 then forces allocation at rename) | | \(f(truncatingFloorMs)) ms\(pythonFloor) | |")
print("| cleanup of 10,000 entries, new cache (index built) | \(f(ms(cold))) ms | removed \(coldReport?.removedCount ?? 0) | |")
print("| cleanup of 10,000 entries, index already built | \(f(ms(warm))) ms | removed \(warmReport?.removedCount ?? 0) | |")
print("| cleanup with nothing to do, 0 entries left | \(f(ms(noop) * 1000)) us | | |")
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date()), cache files in \(workBase.path)")

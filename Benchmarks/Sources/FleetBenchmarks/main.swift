// A fleet of three machines (three processes, each with its own ImageManager, memory and disk
// cache) behind one client, with and without the shared memcached tier (WebImageMemcached):
// a Zipf workload over 2,000 images, 20,000 requests spread over the machines in turn, as a
// load balancer would. Prints origin requests and p50/p99 latency of each run, then the cost of
// one tier hit of a 30 KB thumbnail.
//
// Usage: FleetBenchmarks FIXTURES_DIR ANCHORS_FILE BASE_URL (nginx serving FIXTURES_DIR).
// The machines are this executable again: FleetBenchmarks worker INDEX BASE_URL LIST CACHE_DIR [SERVERS].
import Foundation
import Glibc
import Synchronization
import WebImage
import WebImageMemcached

let arguments = CommandLine.arguments
let images = 2_000, requests = 20_000, machines = 3, concurrency = 16

/// Counts the requests that reach the origin.
final class CountingLoader: ImageLoader {
    let base = HTTPImageLoader()
    let count = Atomic<Int>(0)
    func canLoad(_ url: URL) -> Bool { base.canLoad(url) }
    func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        count.add(1, ordering: .relaxed)
        return base.load(request)
    }
}

func ms(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func percentile(_ sorted: [Double], _ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }

/// The URL of image `index`: the 1,000 small JPEGs twice, under two query strings.
func imageURL(_ base: String, _ index: Int) -> URL {
    URL(string: String(format: "%@/small/%04d.jpg?copy=%d", base, index % 1000, index / 1000))!
}

// MARK: - A machine

if arguments.count >= 6, arguments[1] == "worker" {
    let (base, list, cacheDir) = (arguments[3], arguments[4], URL(fileURLWithPath: arguments[5]))
    let indices = try String(contentsOfFile: list, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }
    let local = ImageCache(namespace: "fleet", directory: cacheDir, config: .init(cleanupInterval: nil))
    var cache: any ImageCaching = local
    if arguments.count >= 7 {
        let tier = try SharedCacheTier(.init(servers: try SharedCacheConfiguration.servers(from: arguments[6]), namespace: "bench"))
        cache = TieredImageCache(base: local, tier: tier)
    }
    let loader = CountingLoader()
    var configuration = ImageManager.Configuration()
    configuration.rateLimiter = nil
    let manager = ImageManager(cache: cache, loaders: ImageLoaders([loader]), configuration: configuration)
    let clock = ContinuousClock()
    let latencies = try await withThrowingTaskGroup(of: Double.self) { group in
        var iterator = indices.makeIterator(), latencies: [Double] = []
        func next() {
            guard let index = iterator.next() else { return }
            group.addTask {
                let start = clock.now
                _ = try await manager.image(for: imageURL(base, index))
                return ms(clock.now - start)
            }
        }
        for _ in 0..<concurrency { next() }
        while let latency = try await group.next() {
            latencies.append(latency)
            next()
        }
        return latencies
    }
    await manager.waitForPendingStores()
    print("origin \(loader.count.load(ordering: .relaxed))")
    print("latencies " + latencies.map { String(format: "%.4f", $0) }.joined(separator: ","))
    exit(0)
}

// MARK: - The client

guard arguments.count >= 4 else {
    FileHandle.standardError.write(Data("usage: FleetBenchmarks FIXTURES_DIR ANCHORS_FILE BASE_URL\n".utf8))
    exit(2)
}
let base = arguments[3]
let work = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-fleet-\(getpid())")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: work) }

/// A Zipf(1) sequence of image indices, the same in every run (SplitMix64, seed 42).
func zipfWorkload() -> [Int] {
    var cdf: [Double] = [], total = 0.0
    for rank in 1...images {
        total += 1 / Double(rank)
        cdf.append(total)
    }
    var state: UInt64 = 42
    func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }
    // Ranks are shuffled over the images, so that popularity does not follow the file order.
    var order = Array(0..<images)
    for i in stride(from: images - 1, to: 0, by: -1) { order.swapAt(i, Int(next() * Double(i + 1))) }
    return (0..<requests).map { _ in
        let u = next() * total
        var low = 0, high = images - 1
        while low < high {
            let mid = (low + high) / 2
            if cdf[mid] < u { low = mid + 1 } else { high = mid }
        }
        return order[low]
    }
}

/// memcached nodes on free loopback ports.
final class Nodes {
    var processes: [Process] = []
    var ports: [Int] = []

    init(count: Int) throws {
        for _ in 0..<count {
            let port = Nodes.freePort()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/memcached")
            process.arguments = ["-l", "127.0.0.1", "-p", "\(port)", "-U", "0", "-m", "256", "-t", "1"] + (getuid() == 0 ? ["-u", "root"] : [])
            try process.run()
            processes.append(process)
            ports.append(port)
        }
        usleep(300_000)
    }

    var url: String { "memcached://" + ports.map { "127.0.0.1:\($0)" }.joined(separator: ",") }

    func stop() { for process in processes { process.terminate(); process.waitUntilExit() } }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct FleetRun {
    var origin = 0
    var latencies: [Double] = []
    var seconds = 0.0
}

/// The workload through three machine processes, with the tier at `servers` or without one.
func runFleet(_ workload: [Int], servers: String?, label: String) throws -> FleetRun {
    var outputs: [(Process, Pipe)] = []
    let start = ContinuousClock.now
    for machine in 0..<machines {
        let list = work.appendingPathComponent("\(label)-\(machine).txt")
        let mine = workload.enumerated().filter { $0.offset % machines == machine }.map { String($0.element) }
        try Data(mine.joined(separator: "\n").utf8).write(to: list)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["worker", "\(machine)", base, list.path, work.appendingPathComponent("\(label)-cache\(machine)").path]
            + (servers.map { [$0] } ?? [])
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        outputs.append((process, pipe))
    }
    var run = FleetRun()
    for (process, pipe) in outputs {
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        for line in text.split(separator: "\n") {
            if line.hasPrefix("origin ") { run.origin += Int(line.dropFirst(7)) ?? 0 }
            if line.hasPrefix("latencies ") { run.latencies += line.dropFirst(10).split(separator: ",").compactMap { Double($0) } }
        }
    }
    run.seconds = ms(ContinuousClock.now - start) / 1000
    run.latencies.sort()
    return run
}

let workload = zipfWorkload()
let distinct = Set(workload).count
var rows: [(String, FleetRun)] = []
rows.append(("without the tier", try runFleet(workload, servers: nil, label: "local")))
let nodes = try Nodes(count: 3)
defer { nodes.stop() }
rows.append(("with the tier (3 memcached nodes)", try runFleet(workload, servers: nodes.url, label: "tier")))

print("Fleet: 3 machine processes, \(requests) requests over \(images) images (Zipf s=1, \(distinct) distinct), \(concurrency) at once per machine")
print("")
print("| run | origin requests | / distinct images | p50 ms | p99 ms | wall s |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for (label, run) in rows {
    print("| \(label) | \(run.origin) | \(String(format: "%.3f", Double(run.origin) / Double(distinct)))x | "
          + "\(String(format: "%.3f", percentile(run.latencies, 0.5))) | \(String(format: "%.3f", percentile(run.latencies, 0.99))) | "
          + "\(String(format: "%.1f", run.seconds)) |")
}

// MARK: - One tier hit of a 30 KB thumbnail

let source = try Image(data: Data(contentsOf: URL(fileURLWithPath: arguments[1]).appendingPathComponent("photo-1024x768.webp")))
let thumbnail = try ResizingTransformer(width: 400, height: 300).transform(source)
var quality = 0.97
var encoded = try ImageCoders.shared.encode(thumbnail, as: .jpeg, options: .init(quality: quality))
while encoded.count > 32_000, quality > 0.3 {
    quality -= 0.05
    encoded = try ImageCoders.shared.encode(thumbnail, as: .jpeg, options: .init(quality: quality))
}
let tier = try SharedCacheTier(.init(servers: try SharedCacheConfiguration.servers(from: nodes.url), connections: 1, namespace: "bench-hit"))
await tier.store(encoded, forKey: "thumbnail")
var fetch: [Double] = [], fetchDecode: [Double] = []
let clock = ContinuousClock()
for _ in 0..<2000 {
    var start = clock.now
    let bytes = await tier.data(forKey: "thumbnail")
    fetch.append(ms(clock.now - start))
    start = clock.now
    let data = await tier.data(forKey: "thumbnail")!
    _ = try ImageCoders.shared.decode(data)
    fetchDecode.append(ms(clock.now - start))
    precondition(bytes == encoded)
}
fetch.sort()
fetchDecode.sort()
print("")
print("tier hit of a \(encoded.count / 1000) KB \(thumbnail.width)x\(thumbnail.height) JPEG thumbnail (2,000 gets): "
      + "fetch p50 \(String(format: "%.3f", percentile(fetch, 0.5))) ms, p99 \(String(format: "%.3f", percentile(fetch, 0.99))) ms; "
      + "fetch + decode p50 \(String(format: "%.3f", percentile(fetchDecode, 0.5))) ms")

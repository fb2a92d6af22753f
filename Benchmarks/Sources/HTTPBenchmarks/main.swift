import AsyncHTTPClient
import BenchSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WebImage

// HTTP benchmarks for issue "HTTP loading": 1,000 small JPEGs and one 50 MiB file from nginx on
// 127.0.0.1, with our loader, FoundationNetworking's URLSession and AsyncHTTPClient, beside
// `curl --parallel` measured by anchors.sh in the same run.
// Usage: HTTPBenchmarks FIXTURES_DIR ANCHORS_FILE BASE_URL (http-bench.sh starts nginx)

let run = BenchRun(usage: "HTTPBenchmarks")
let base = CommandLine.arguments.count >= 4 ? CommandLine.arguments[3] : "http://127.0.0.1:8080"
let urls = (0..<1000).map { URL(string: String(format: "\(base)/small/%04d.jpg", $0))! }
let large = URL(string: "\(base)/large-50MiB.bin")!
let clock = ContinuousClock()

/// Runs `job` for every URL at once: the client's own limit keeps `width` transfers running, as
/// `curl --parallel --parallel-max width` does with its list of URLs.
func fetchAllAtOnce(_ list: [URL] = urls, _ job: @escaping @Sendable (URL) async throws -> Int) async throws {
    try await withThrowingTaskGroup(of: Int.self) { group in
        for url in list { group.addTask { try await job(url) } }
        var total = 0
        while let bytes = try await group.next() { total += bytes }
        precondition(total > list.count * 1_000, "the small files did not arrive")
    }
}

/// Runs `job` for every URL with at most `width` at once, the caller holding the limit (each
/// new request starts only when the caller has seen one end).
func fetchAll(width: Int, _ job: @escaping @Sendable (URL) async throws -> Int) async throws {
    try await withThrowingTaskGroup(of: Int.self) { group in
        var next = 0
        for _ in 0..<min(width, urls.count) { let url = urls[next]; next += 1; group.addTask { try await job(url) } }
        var total = 0
        while let bytes = try await group.next() {
            total += bytes
            if next < urls.count { let url = urls[next]; next += 1; group.addTask { try await job(url) } }
        }
        precondition(total > 1_000_000, "the small files did not arrive")
    }
}

func rssKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
}

// WEBIMAGE_HTTP_PROFILE=WIDTH loops our loader over the small files for a profiler and exits.
/// A loader that accepts the 50 MiB file (the default limit is lower).
func largeFileLoader() -> HTTPImageLoader {
    var configuration = HTTPImageLoader.Configuration()
    configuration.maximumResponseSize = 64 << 20
    return HTTPImageLoader(configuration: configuration)
}

// WEBIMAGE_HTTP_PROFILE=large prints 30 times of the 50 MiB file and exits.
if ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_PROFILE"] == "large" {
    let loader = largeFileLoader()
    var times: [String] = []
    for _ in 0..<30 { times.append(formatted(milliseconds(try await clock.measure { _ = try await loader.data(for: ImageLoaderRequest(url: large)) }))) }
    print(times.joined(separator: " "))
    exit(0)
}
// WEBIMAGE_HTTP_PROFILE=both: ours and the no-library floor (RawCurlFloor), caller holding 6, in
// alternate rounds, for one profile of the two libcurl threads.
// (floor: the floor alone, 30 rounds, to count its system calls.)
if ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_PROFILE"] == "floor" {
    let floor = RawCurlFloor(width: 6)
    for _ in 0..<30 { try await fetchAll(width: 6) { await floor.bytes(of: $0) } }
    exit(0)
}
if ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_PROFILE"] == "both" {
    var configuration = HTTPImageLoader.Configuration()
    configuration.maximumConcurrentDownloads = 6
    let loader = HTTPImageLoader(configuration: configuration)
    let floor = RawCurlFloor(width: 6), optioned = RawCurlFloor(width: 6, likeOurs: true)
    var ours: [Double] = [], floors: [Double] = [], optionedFloors: [Double] = []
    for _ in 0..<15 {
        ours.append(try await timed { try await fetchAll(width: 6) { try await loader.data(for: ImageLoaderRequest(url: $0)).0.count } })
        floors.append(try await timed { try await fetchAll(width: 6) { await floor.bytes(of: $0) } })
        optionedFloors.append(try await timed { try await fetchAll(width: 6) { await optioned.bytes(of: $0) } })
    }
    let (a, b, c) = (Spread(samples: ours), Spread(samples: floors), Spread(samples: optionedFloors))
    print("ours \(a.text) ms, floor \(b.text) ms (\(formatted(a.median / b.median))x), floor with our libcurl options \(c.text) ms (\(formatted(a.median / c.median))x)")
    exit(0)
}
if let profile = ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_PROFILE"], let width = Int(profile) {
    var configuration = HTTPImageLoader.Configuration()
    configuration.maximumConcurrentDownloads = width
    let loader = HTTPImageLoader(configuration: configuration)
    for _ in 0..<30 { try await fetchAll(width: width) { try await loader.data(for: ImageLoaderRequest(url: $0)).0.count } }
    exit(0)
}

struct Row { var name: String; var ours: Spread; var curl: Spread?; var session: Spread?; var ahc: Spread? }
var rows: [Row] = []
/// Ours against the no-library floor (`RawCurlFloor`), from the same rounds.
var floorLines: [String] = []
let onlyOurs = ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_ONLY_OURS"] != nil
let runs = Int(ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_RUNS"] ?? "") ?? 11
/// Every job of a row runs once per round, in turn (`interleaved`): ours and its anchors see the
/// same moments of the machine. Without the peers (`WEBIMAGE_HTTP_ONLY_OURS`), only ours and curl.
func rounds(_ jobs: [(@Sendable () async throws -> Double)?]) async throws -> [Spread?] {
    // Each job wrapped in a closure of the plain type (a cast of the array's element type fails at run time).
    let present: [() async throws -> Double] = jobs.compactMap { job in job.map { job in { try await job() } } }
    var spreads = try await interleaved(rounds: runs, present).makeIterator()
    return jobs.map { $0 == nil ? nil : spreads.next() }
}
/// Milliseconds `body` took.
func timed(_ body: @Sendable () async throws -> Void) async rethrows -> Double {
    let start = clock.now
    try await body()
    return milliseconds(clock.now - start)
}

/// `curl` run as a process with `arguments`, its wall time from start to exit in milliseconds,
/// as ../shared/bench/anchors.sh measures it with hyperfine.
func curlMs(_ arguments: [String]) throws -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    let start = clock.now
    try process.run()
    process.waitUntilExit()
    let elapsed = milliseconds(clock.now - start)
    precondition(process.terminationStatus == 0, "curl \(arguments) failed")
    return elapsed
}
let hasCurl = FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
let curlList = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-http-bench-\(getpid()).urls")
try urls.map { "url = \"\($0.absoluteString)\"" }.joined(separator: "\n").write(to: curlList, atomically: true, encoding: .utf8)
defer { try? FileManager.default.removeItem(at: curlList) }
func curlJob(_ arguments: [String]) -> (@Sendable () async throws -> Double)? { hasCurl ? { @Sendable in try curlMs(arguments) } : nil }

// The large file first, while the process is fresh, each client made just before (with a
// URLSession and an AsyncHTTPClient both alive, a version of ours that recycled body memory ran
// 2x slower; that version is not in).
let bigLoader = largeFileLoader()
let session = URLSession(configuration: .default)
let ahc = HTTPClient(eventLoopGroupProvider: .singleton)
if wantsRow("one 50 MiB file") {
    let largeRounds = try await rounds([
        { @Sendable in try await timed { _ = try await bigLoader.data(for: ImageLoaderRequest(url: large)) } },
        curlJob(["-s", "-o", "/dev/null", large.absoluteString]),
        onlyOurs ? nil : { @Sendable in try await timed { _ = try await session.data(from: large) } },
        onlyOurs ? nil : { @Sendable in
            try await timed {
                let response = try await ahc.execute(HTTPClientRequest(url: large.absoluteString), timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 64 << 20)
            }
        },
    ])
    rows.append(Row(name: "one 50 MiB file", ours: largeRounds[0]!, curl: largeRounds[1], session: largeRounds[2], ahc: largeRounds[3]))
}

for width in [6, 32] where wantsRow("1,000 x 12 KB, \(width) at once") {
    // Each client gets its own limit of `width` connections to the host. "All at once": every
    // request is handed over and the client's limit keeps `width` running, as curl is given its
    // list; "held": the caller keeps `width` in flight and starts one when one ends.
    var configuration = HTTPImageLoader.Configuration()
    configuration.maximumConcurrentDownloads = width
    let loader = HTTPImageLoader(configuration: configuration)
    let sessionConfiguration = URLSessionConfiguration.default
    sessionConfiguration.httpMaximumConnectionsPerHost = width
    let session = URLSession(configuration: sessionConfiguration)
    let ahc = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(
        connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: width)))
    let viaOurs: @Sendable (URL) async throws -> Int = { try await loader.data(for: ImageLoaderRequest(url: $0)).0.count }
    let floor = RawCurlFloor(width: width)
    let viaFloor: @Sendable (URL) async throws -> Int = { await floor.bytes(of: $0) }
    let viaSession: @Sendable (URL) async throws -> Int = { try await session.data(from: $0).0.count }
    let viaAHC: @Sendable (URL) async throws -> Int = { url in
        let response = try await ahc.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(15))
        return try await response.body.collect(upTo: 1 << 20).readableBytes
    }
    let spreads = try await rounds([
        { @Sendable in try await timed { try await fetchAllAtOnce(urls, viaOurs) } },
        { @Sendable in try await timed { try await fetchAll(width: width, viaOurs) } },
        curlJob(["-s", "--parallel", "--parallel-max", "\(width)", "-K", curlList.path]),
        onlyOurs ? nil : { @Sendable in try await timed { try await fetchAllAtOnce(urls, viaSession) } },
        onlyOurs ? nil : { @Sendable in try await timed { try await fetchAll(width: width, viaSession) } },
        onlyOurs ? nil : { @Sendable in try await timed { try await fetchAllAtOnce(urls, viaAHC) } },
        onlyOurs ? nil : { @Sendable in try await timed { try await fetchAll(width: width, viaAHC) } },
        { @Sendable in try await timed { try await fetchAllAtOnce(urls, viaFloor) } },
        { @Sendable in try await timed { try await fetchAll(width: width, viaFloor) } },
    ])
    rows.append(Row(name: "1,000 x 12 KB, \(width) at once (all requested, the client's limit)", ours: spreads[0]!, curl: spreads[2],
                    session: spreads[3], ahc: spreads[5]))
    rows.append(Row(name: "1,000 x 12 KB, \(width) at once (the caller holds \(width) in flight)", ours: spreads[1]!, curl: spreads[2],
                    session: spreads[4], ahc: spreads[6]))
    for (label, ours, floor) in [("all requested", spreads[0]!, spreads[7]!), ("the caller holds \(width)", spreads[1]!, spreads[8]!)] {
        let curlRatio = spreads[2].map { "; floor / curl \(formatted(floor.median / $0.median))x" } ?? ""
        floorLines.append("| 1,000 x 12 KB, \(width) at once (\(label)) | \(ours.text) | \(floor.text) | \(formatted(ours.median / floor.median))x; paired \(ours.ratios(over: floor).text)x\(curlRatio) |")
    }
    try await ahc.shutdown().get()
    session.invalidateAndCancel()
}

// 100 cold loads: a new client each round (no open connection yet), every request at once under
// the client's default per-host limit. A loader that waited for multiplexing on plain http
// (CURLOPT_PIPEWAIT) sent these one after the other until its first connection answered.
if wantsRow("100 x 12 KB from a new client (cold)") {
    let coldURLs = Array(urls.prefix(100))
    let coldRounds = try await rounds([
        { @Sendable in
            let loader = HTTPImageLoader()
            return try await timed { try await fetchAllAtOnce(coldURLs) { try await loader.data(for: ImageLoaderRequest(url: $0)).0.count } }
        },
        onlyOurs ? nil : { @Sendable in
            let session = URLSession(configuration: .default)
            defer { session.invalidateAndCancel() }
            return try await timed { try await fetchAllAtOnce(coldURLs) { try await session.data(from: $0).0.count } }
        },
        onlyOurs ? nil : { @Sendable in
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            let elapsed = try await timed {
                try await fetchAllAtOnce(coldURLs) { url in
                    let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(15))
                    return try await response.body.collect(upTo: 1 << 20).readableBytes
                }
            }
            try await client.shutdown().get()
            return elapsed
        },
    ])
    rows.append(Row(name: "100 x 12 KB from a new client (cold), the client's default limit", ours: coldRounds[0]!, curl: nil,
                    session: coldRounds[1], ahc: coldRounds[2]))
}
var inFlightLine: String?
if wantsRow("memory per in-flight transfer") {
    // Memory per in-flight transfer: 256 transfers held open by a slow location (limit_rate).
    var slowConfiguration = HTTPImageLoader.Configuration()
    slowConfiguration.maximumConcurrentDownloads = 256
    let slowLoader = HTTPImageLoader(configuration: slowConfiguration)
    let before = rssKiB()
    let inFlight = (0..<256).map { i in
        Task { _ = try? await slowLoader.data(for: ImageLoaderRequest(url: URL(string: "\(base)/slow/\(String(format: "%04d", i)).jpg")!)) }
    }
    try await Task.sleep(for: .seconds(1))
    let during = rssKiB()
    let live = slowLoader.liveTransferCount
    for task in inFlight { task.cancel() }
    for task in inFlight { await task.value }
    inFlightLine = "memory per in-flight transfer: \(formatted(Double(during - before) / Double(max(1, live)))) KiB (\(live) transfers open, RSS \(before) -> \(during) KiB)"
}
try await ahc.shutdown().get()

print("Medians of \(runs) interleaved rounds (every client and curl in the same rounds), with the rounds' range in brackets; curl is")
print("`curl --parallel --parallel-max N` given the 1,000 URLs, run as a process (its start included, as hyperfine times it).")
print("")
print("| benchmark | ours ms | curl --parallel ms | ours / curl | URLSession ms | AsyncHTTPClient ms | ours / AsyncHTTPClient |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for row in rows {
    let curl = row.curl?.text ?? "-"
    // The ratio of the medians, then the paired one (each round over the anchor's same round).
    let ratio = row.curl.map { formatted(row.ours.median / $0.median) + "x; paired " + row.ours.ratios(over: $0).text + "x" } ?? "-"
    let ahcRatio = row.ahc.map { formatted(row.ours.median / $0.median) + "x; paired " + row.ours.ratios(over: $0).text + "x" } ?? "-"
    print("| \(row.name) | \(row.ours.text) | \(curl) | \(ratio) | \(row.session?.text ?? "-") | \(row.ahc?.text ?? "-") | \(ahcRatio) |")
}
if !floorLines.isEmpty {
    print("")
    print("The no-library floor of a loader that keeps libcurl on its own thread (raw_curl.c: libcurl's multi loop on a plain")
    print("thread, a continuation per transfer resumed from it; no checks, bodies counted), in the same rounds:")
    print("")
    print("| benchmark | ours ms | floor ms | ours / floor |")
    print("| --- | ---: | ---: | ---: |")
    for line in floorLines { print(line) }
}
if let inFlightLine {
    print("")
    print(inFlightLine)
}
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date())")

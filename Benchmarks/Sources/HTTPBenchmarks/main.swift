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

/// Median of `runs` runs (after a warm-up) of an async job.
func medianAsync(_ runs: Int, _ body: () async throws -> Void) async rethrows -> Double {
    try await body()
    var times: [Double] = []
    for _ in 0..<runs { times.append(milliseconds(try await clock.measure { try await body() })) }
    if ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_TIMES"] != nil { print(times.map(formatted).joined(separator: " ")) }
    return times.sorted()[times.count / 2]
}

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
if let profile = ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_PROFILE"], let width = Int(profile) {
    var configuration = HTTPImageLoader.Configuration()
    configuration.maximumConcurrentDownloads = width
    let loader = HTTPImageLoader(configuration: configuration)
    for _ in 0..<30 { try await fetchAll(width: width) { try await loader.data(for: ImageLoaderRequest(url: $0)).0.count } }
    exit(0)
}

struct Row { var name: String; var ours: Double; var curl: Double?; var session: Double; var ahc: Double }
var rows: [Row] = []
let onlyOurs = ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_ONLY_OURS"] != nil
let runs = Int(ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_RUNS"] ?? "") ?? 11

// The large file first, while the process is fresh, each client made just before its turn (with
// a URLSession and an AsyncHTTPClient both alive, a version of ours that recycled body memory
// ran 2x slower; that version is not in, and the others are made when their turn comes).
let bigLoader = largeFileLoader()
let oursLarge = try await medianAsync(runs) { _ = try await bigLoader.data(for: ImageLoaderRequest(url: large)) }
let session = URLSession(configuration: .default)
let sessionLarge = try await medianAsync(runs) { _ = try await session.data(from: large) }
let ahc = HTTPClient(eventLoopGroupProvider: .singleton)
let ahcLarge = try await medianAsync(runs) {
    let response = try await ahc.execute(HTTPClientRequest(url: large.absoluteString), timeout: .seconds(30))
    _ = try await response.body.collect(upTo: 64 << 20)
}

for width in [6, 32] {
    // Each client gets its own limit of `width` connections to the host, then every request at once.
    var configuration = HTTPImageLoader.Configuration()
    configuration.maximumConcurrentDownloads = width
    let loader = HTTPImageLoader(configuration: configuration)
    let ours = try await medianAsync(runs) { try await fetchAllAtOnce { try await loader.data(for: ImageLoaderRequest(url: $0)).0.count } }
    let oursHeld = try await medianAsync(runs) {
        try await fetchAll(width: width) { try await loader.data(for: ImageLoaderRequest(url: $0)).0.count }
    }
    if onlyOurs { print("ours \(width): \(formatted(ours)) ms; caller holding the limit: \(formatted(oursHeld)) ms"); continue }
    let sessionConfiguration = URLSessionConfiguration.default
    sessionConfiguration.httpMaximumConnectionsPerHost = width
    let session = URLSession(configuration: sessionConfiguration)
    let ahc = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(
        connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: width)))
    let viaAHC: @Sendable (URL) async throws -> Int = { url in
        let response = try await ahc.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(15))
        return try await response.body.collect(upTo: 1 << 20).readableBytes
    }
    let curl = run.anchors["http_1000x12KB_curl_parallel\(width)"]
    rows.append(Row(name: "1,000 x 12 KB, \(width) at once (all requested, the client's limit)", ours: ours, curl: curl,
                    session: try await medianAsync(runs) { try await fetchAllAtOnce { try await session.data(from: $0).0.count } },
                    ahc: try await medianAsync(runs) { try await fetchAllAtOnce(urls, viaAHC) }))
    rows.append(Row(name: "1,000 x 12 KB, \(width) at once (the caller holds \(width) in flight)", ours: oursHeld, curl: curl,
                    session: try await medianAsync(runs) { try await fetchAll(width: width) { try await session.data(from: $0).0.count } },
                    ahc: try await medianAsync(runs) { try await fetchAll(width: width, viaAHC) }))
    try await ahc.shutdown().get()
    session.invalidateAndCancel()
}

// 100 cold loads: a new client each round (no open connection yet), every request at once under
// the client's default per-host limit. A loader that waited for multiplexing on plain http
// (CURLOPT_PIPEWAIT) sent these one after the other until its first connection answered.
let coldURLs = Array(urls.prefix(100))
func fetchCold(_ job: @escaping @Sendable (URL) async throws -> Int) async throws { try await fetchAllAtOnce(coldURLs, job) }
let oursCold = try await medianAsync(runs) {
    let loader = HTTPImageLoader()
    try await fetchCold { try await loader.data(for: ImageLoaderRequest(url: $0)).0.count }
}
if !onlyOurs {
    let sessionCold = try await medianAsync(runs) {
        let session = URLSession(configuration: .default)
        try await fetchCold { try await session.data(from: $0).0.count }
        session.invalidateAndCancel()
    }
    let ahcCold = try await medianAsync(runs) {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        try await fetchCold { url in
            let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(15))
            return try await response.body.collect(upTo: 1 << 20).readableBytes
        }
        try await client.shutdown().get()
    }
    rows.append(Row(name: "100 x 12 KB from a new client (cold), the client's default limit", ours: oursCold, curl: nil,
                    session: sessionCold, ahc: ahcCold))
} else {
    print("ours cold 100: \(formatted(oursCold)) ms")
}

rows.append(Row(name: "one 50 MiB file", ours: oursLarge, curl: run.anchors["http_50MiB_curl"], session: sessionLarge, ahc: ahcLarge))

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
try await ahc.shutdown().get()

print("| benchmark | ours ms | curl --parallel ms | ours / curl | URLSession ms | AsyncHTTPClient ms |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for row in rows {
    let curl = row.curl.map(formatted) ?? "-"
    let ratio = row.curl.map { formatted(row.ours / $0) + "x" } ?? "-"
    print("| \(row.name) | \(formatted(row.ours)) | \(curl) | \(ratio) | \(formatted(row.session)) | \(formatted(row.ahc)) |")
}
print("")
print("memory per in-flight transfer: \(formatted(Double(during - before) / Double(max(1, live)))) KiB (\(live) transfers open, RSS \(before) -> \(during) KiB)")
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date())")

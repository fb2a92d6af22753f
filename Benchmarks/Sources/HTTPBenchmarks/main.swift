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
    return times.sorted()[times.count / 2]
}

/// Runs `job` for every URL with at most `width` at once.
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
if let profile = ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_PROFILE"], let width = Int(profile) {
    var configuration = HTTPImageLoader.Configuration()
    configuration.maximumConcurrentDownloads = width
    let loader = HTTPImageLoader(configuration: configuration)
    for _ in 0..<30 { try await fetchAll(width: width) { try await loader.data(for: ImageLoaderRequest(url: $0)).0.count } }
    exit(0)
}

struct Row { var name: String; var ours: Double; var curl: Double?; var session: Double; var ahc: Double }
var rows: [Row] = []

let session = URLSession(configuration: .default)
let ahc = HTTPClient(eventLoopGroupProvider: .singleton)

for width in [6, 32] {
    var configuration = HTTPImageLoader.Configuration()
    configuration.maximumConcurrentDownloads = width
    let loader = HTTPImageLoader(configuration: configuration)
    let ours = try await medianAsync(5) { try await fetchAll(width: width) { try await loader.data(for: ImageLoaderRequest(url: $0)).0.count } }
    if ProcessInfo.processInfo.environment["WEBIMAGE_HTTP_ONLY_OURS"] != nil { print("ours \(width): \(ours)"); continue }
    let viaSession = try await medianAsync(5) { try await fetchAll(width: width) { try await session.data(from: $0).0.count } }
    let viaAHC = try await medianAsync(5) {
        try await fetchAll(width: width) { url in
            let response = try await ahc.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(15))
            return try await response.body.collect(upTo: 1 << 20).readableBytes
        }
    }
    rows.append(Row(name: "1,000 x 12 KB, \(width) at once", ours: ours, curl: run.anchors["http_1000x12KB_curl_parallel\(width)"],
                    session: viaSession, ahc: viaAHC))
}

var bigConfiguration = HTTPImageLoader.Configuration()
bigConfiguration.maximumResponseSize = 64 << 20
let bigLoader = HTTPImageLoader(configuration: bigConfiguration)
let oursLarge = try await medianAsync(5) { _ = try await bigLoader.data(for: ImageLoaderRequest(url: large)) }
let sessionLarge = try await medianAsync(5) { _ = try await session.data(from: large) }
let ahcLarge = try await medianAsync(5) {
    let response = try await ahc.execute(HTTPClientRequest(url: large.absoluteString), timeout: .seconds(30))
    _ = try await response.body.collect(upTo: 64 << 20)
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

import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import WebImage
import WebImageServer

/// `webimage serve`: the image proxy and thumbnail server (WebImageServer).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve images processed on the fly: GET /SIGNATURE/OPTIONS.../plain/URL (imgproxy-style paths).",
        discussion: """
            Requests are signed with HMAC-SHA256 (key and salt in hex: the configuration's key and salt, \
            or WEBIMAGE_KEY and WEBIMAGE_SALT). No request reaches loopback, private, link-local or \
            metadata addresses unless allowedNetworks says so. SIGTERM or SIGINT stop it gracefully.
            """
    )

    @Option(help: "The address to listen on (default: the configuration's, else 127.0.0.1).")
    var host: String?

    @Option(help: "The port (default: the configuration's, else 8080; 0 picks a free one).")
    var port: Int?

    @Option(help: "A JSON configuration file (keys as ServerConfiguration's properties).")
    var config: String?

    @Option(help: "Follow the origin's caching headers (respect, the default: stale sources are revalidated, no-store ones kept nowhere, results pass on the origin's rules) or not (ignore). Overrides the configuration's cachePolicy.")
    var cachePolicy: CachePolicyOption?

    @Flag(help: "Accept unsigned requests (development only; a warning is printed).")
    var insecure = false

    @Option(help: "A fleet's shared cache tier behind the disk cache: memcached://HOST:PORT,HOST:PORT.")
    var sharedCache: SharedCacheOption?

    @Option(help: "The least severe log messages printed: trace, debug, info (default: one line per request), notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Flag(help: "Serve the bundled samples as the origin (on loopback, with a key made for this run) and print signed URLs to open.")
    var demo = false

    func run() async throws {
        var configuration = ServerConfiguration()
        do {
            if let config { configuration = try ServerConfiguration.decode(try InputFile.read(config)) }
        } catch {
            Terminal.error("\(config ?? ""): \(Terminal.describe(error))")
            throw ExitCode(2)
        }
        let environment = ProcessInfo.processInfo.environment
        // Pixel buffers of many sizes: mapped and unmapped, so the resident size follows what is held.
        if environment["MALLOC_MMAP_THRESHOLD_"] == nil { ImageServer.mapLargeAllocations() }
        // And the smaller freed blocks' pages given back every second (MALLOC_TRIM_INTERVAL_MS=0: off).
        ImageServer.trimHeaps(every: .milliseconds(Int(environment["MALLOC_TRIM_INTERVAL_MS"] ?? "") ?? 1000))
        if let key = environment["WEBIMAGE_KEY"] { configuration.key = key }
        if let salt = environment["WEBIMAGE_SALT"] { configuration.salt = salt }
        if let host { configuration.host = host }
        if let port { configuration.port = port }
        if insecure { configuration.insecure = true }
        if let cachePolicy { configuration.cachePolicy = cachePolicy.policy }
        if let sharedCache {
            configuration.sharedCache = "memcached://" + sharedCache.servers.map(\.description).joined(separator: ",")
        }
        if demo {
            // The samples are served on loopback: that network is allowed, and a key is made for this run.
            configuration.allowedNetworks.append("127.0.0.1")
            if !configuration.insecure, configuration.key == nil || configuration.salt == nil {
                configuration.key = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
                configuration.salt = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            }
        }
        let logLevel = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel
            return handler
        }
        // Prometheus is the metrics backend: the library's and the server's metrics at /metrics.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let server: ImageServer
        do {
            server = try ImageServer(configuration: configuration, metrics: registry)
        } catch {
            Terminal.error(Terminal.describe(error))
            throw ExitCode(2)
        }
        let host = configuration.host
        let origin = demo ? try await DemoServer(files: SampleImages.all.reduce(into: [:]) { $0[$1.name] = $1.data }, port: 0,
                                                 chunk: 1 << 20, interval: .milliseconds(0)) { _ in } : nil
        let signer = try? configuration.signer()
        try await server.run { port in
            Terminal.error("serve: listening on http://\(host):\(port)")
            guard let origin else { return }
            for (name, options) in ServeCommand.demoRequests {
                let path = "/\(options)/plain/http://127.0.0.1:\(origin.port)/\(name)"
                print("http://\(host):\(port)" + (signer.map { $0.sign(path) } ?? "/_" + path))
            }
            fflush(nil)
        }
        await origin?.stop()
    }

    /// What `--demo` prints: a sample with the options that show it off.
    static let demoRequests: [(String, String)] = [
        ("photo-baseline.jpg", "rs:fit:320:240/f:webp"), ("photo-progressive-exif6.jpg", "rs:fill-crop:200:200/g:ce/q:70"),
        ("badge-alpha.png", "rs:fit:128:0/gs"), ("bouncing-ball.gif", "rs:fit:100:100"), ("photo-lossy.webp", "info"),
    ]
}

/// `--log-level` takes swift-log's level names.
extension Logger.Level: @retroactive ExpressibleByArgument {}

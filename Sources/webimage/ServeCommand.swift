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

    @Flag(help: "Accept unsigned requests (development only; a warning is printed).")
    var insecure = false

    func run() async throws {
        var configuration = ServerConfiguration()
        do {
            if let config { configuration = try ServerConfiguration.decode(try InputFile.read(config)) }
        } catch {
            Terminal.error("\(config ?? ""): \(Terminal.describe(error))")
            throw ExitCode(2)
        }
        let environment = ProcessInfo.processInfo.environment
        if let key = environment["WEBIMAGE_KEY"] { configuration.key = key }
        if let salt = environment["WEBIMAGE_SALT"] { configuration.salt = salt }
        if let host { configuration.host = host }
        if let port { configuration.port = port }
        if insecure { configuration.insecure = true }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info
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
        try await server.run { port in
            Terminal.error("serve: listening on http://\(host):\(port)")
        }
    }
}

import ExampleSupport
import Foundation
import Metrics
import Prometheus
import WebImage

// The library's metrics collected by swift-prometheus: bootstrap the backend first, then make
// the manager, load, and print what a /metrics endpoint would serve.
// Usage: swift run PrometheusMetrics [URL ...]

/// Loads `urls` twice (the second round from memory) with a manager made after the bootstrap,
/// and prints the `webimage_` families of `registry`.
func run(_ urls: [URL], registry: PrometheusCollectorRegistry) async {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-prometheus-\(getpid())")
    defer { try? FileManager.default.removeItem(at: directory) }
    // Made after the bootstrap: a manager binds its metrics to the backend when it is made.
    let manager = ImageManager(cache: ImageCache(namespace: "prometheus-example", directory: directory))
    for url in urls + urls {
        do {
            let result = try await manager.result(for: url)
            print("\(url.lastPathComponent): \(result.image.width)x\(result.image.height) from \(result.cacheType)")
        } catch {
            print("\(url.lastPathComponent): \(error)")
        }
    }
    await manager.waitForPendingStores()
    print("\n# what GET /metrics would return (the webimage_ families):")
    for line in registry.emitToString().split(separator: "\n") where line.contains("webimage_") {
        print(line)
    }
}

let registry = PrometheusCollectorRegistry()
MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
await run(Samples.arguments(or: Samples.all), registry: registry)

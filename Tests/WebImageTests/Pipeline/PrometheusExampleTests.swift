import Foundation
import Testing

/// The worked example of DocC's Observability article (Examples/Sources/PrometheusMetrics),
/// run as `swift build` left it: the library's metrics reach a Prometheus registry.
@Suite struct PrometheusExampleTests {
    @Test func theExampleExposesTheLoadsItMade() throws {
        let example = try #require(CLIRunner.executable?.deletingLastPathComponent().appendingPathComponent("PrometheusMetrics"),
                                   "the package's executables are built beside the tests")
        try #require(FileManager.default.isExecutableFile(atPath: example.path), "swift build --build-tests builds the examples")
        let output = try CLIRunner.run([], executable: example)
        #expect(output.status == 0, "\(output.stderr)")
        // Seven samples loaded twice: seven from the loader, seven from memory.
        #expect(output.stdout.contains("webimage_loads_total{source=\"network\"} 7"), "\(output.stdout)")
        #expect(output.stdout.contains("webimage_loads_total{source=\"memory\"} 7"))
        #expect(output.stdout.contains("webimage_decodes_total 7"))
        #expect(output.stdout.contains("webimage_stage_duration_seconds_count{stage=\"decode\"} 7"))
    }
}

// swift-tools-version: 6.2
import Foundation
import PackageDescription

// A path dependency is named after its folder: "swift-web-image" in a usual clone.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// Benchmarks live in their own package so that the library's build stays light.
let package = Package(
    name: "WebImageBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        // Only the HTTP benchmark's peers; the library itself does not depend on it.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // A metrics backend for the memory-hit row measured with metrics on (WEBIMAGE_METRICS).
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        // The raw C libraries called directly: the floor each of our decoders is compared with.
        .target(
            name: "CRawDecoders",
            linkerSettings: ["png16", "jpeg", "webp", "webpdemux", "gif"].map { .linkedLibrary($0) }
        ),
        // libavif, libheif and libjxl called directly: the floor of the coder plug-ins.
        .target(name: "CRawModern", linkerSettings: ["avif", "heif", "jxl"].map { .linkedLibrary($0) }),
        // libcurl on a plain thread, nothing else: the floor of a loader that keeps libcurl off the pool.
        .target(name: "CRawCurl", linkerSettings: [.linkedLibrary("curl")]),
        .target(name: "BenchSupport", swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [.product(name: "WebImage", package: root), .product(name: "WebImageIsolation", package: root), "CRawDecoders", "BenchSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "ModernCodecBenchmarks",
            dependencies: [
                .product(name: "WebImage", package: root), .product(name: "WebImageAVIF", package: root),
                .product(name: "WebImageHEIF", package: root), .product(name: "WebImageJXL", package: root),
                .product(name: "WebImageSVG", package: root),
                .product(name: "WebImagePDF", package: root),
                "CRawModern", "BenchSupport",
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "TransformBenchmarks",
            dependencies: [.product(name: "WebImage", package: root), "BenchSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "HTTPBenchmarks",
            dependencies: [
                .product(name: "WebImage", package: root), "BenchSupport", "CRawCurl",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "ManagerBenchmarks",
            dependencies: [
                .product(name: "WebImage", package: root), "BenchSupport",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "SoakBenchmarks",
            dependencies: [.product(name: "WebImage", package: root), "BenchSupport", "CRawDecoders"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Three machine processes with and without the shared memcached tier.
        .executableTarget(
            name: "FleetBenchmarks",
            dependencies: [.product(name: "WebImage", package: root), .product(name: "WebImageMemcached", package: root)],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "CacheBenchmarks",
            dependencies: [.product(name: "WebImage", package: root), "BenchSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)

// swift-tools-version: 6.1
import Foundation
import PackageDescription

// A path dependency is named after its folder: "swift-web-image" in a usual clone.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

/// Small programs that show the WebImage API. Run one with `swift run BasicLoading [URL]`.
let package = Package(
    name: "WebImageExamples",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "ExampleSupport", dependencies: [.product(name: "WebImage", package: root)],
                swiftSettings: [.swiftLanguageMode(.v6)]),
    ] + ["BasicLoading", "ProgressStream", "Cancellation", "Prefetching", "Thumbnails", "CustomLoaderAndCache"].map {
        .executableTarget(name: $0, dependencies: ["ExampleSupport", .product(name: "WebImage", package: root)],
                          swiftSettings: [.swiftLanguageMode(.v6)])
    }
)

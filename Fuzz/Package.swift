// swift-tools-version: 6.1
// Coverage-guided fuzz targets (libFuzzer) for the decoders, the incremental decoders and the
// HTTP response path (a loopback server sends each input to the real loader).
// Built and run by scripts/fuzz.sh: `swift build --sanitize=fuzzer --sanitize=address`.
import Foundation
import PackageDescription

// A path dependency is named after its folder: "swift-web-image" in a usual clone.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// FuzzMetadata: the metadata rewriters the image server runs on strangers' files.
let targets = ["FuzzPNG", "FuzzJPEG", "FuzzWebP", "FuzzGIF", "FuzzBMP", "FuzzICO", "FuzzSniff", "FuzzIncremental", "FuzzHTTP", "FuzzMetadata"]
// The coder plug-ins' targets: each decodes with its plug-in, on its own product.
// FuzzWorkerReply reads decoding workers' replies as their pool does (WebImageIsolation).
let plugIns = ["FuzzAVIF": "WebImageAVIF", "FuzzHEIF": "WebImageHEIF", "FuzzJXL": "WebImageJXL", "FuzzTIFF": "WebImageTIFF", "FuzzPDF": "WebImagePDF",
               "FuzzWorkerReply": "WebImageIsolation"]

let package = Package(
    name: "WebImageFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "WebImage", package: root)],
                swiftSettings: [.swiftLanguageMode(.v6)])
    ] + targets.map { name in
        // -parse-as-library: libFuzzer provides main(); the target provides LLVMFuzzerTestOneInput.
        .executableTarget(name: name, dependencies: ["FuzzSupport"],
                          swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])])
    } + plugIns.sorted(by: { $0.key < $1.key }).map { name, product in
        .executableTarget(name: name, dependencies: ["FuzzSupport", .product(name: product, package: root)],
                          swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])])
    }
)

// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "swift-web-image",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WebImage", targets: ["WebImage"]),
        // The fleet's shared cache tier on memcached (libmemcached); WebImage itself gains no dependency.
        .library(name: "WebImageMemcached", targets: ["WebImageMemcached"]),
        // The image proxy and thumbnail server (Hummingbird); WebImage itself gains no server dependency.
        .library(name: "WebImageServer", targets: ["WebImageServer"]),
        // Coder plug-ins for today's formats (SDWebImage's AVIF, HEIF and JPEG XL coders), each on
        // its Debian library; WebImage itself gains no dependency.
        .library(name: "WebImageAVIF", targets: ["WebImageAVIF"]),
        .library(name: "WebImageHEIF", targets: ["WebImageHEIF"]),
        .library(name: "WebImageJXL", targets: ["WebImageJXL"]),
        // SVG rasterised by librsvg (SDWebImageSVGCoder's counterpart).
        .library(name: "WebImageSVG", targets: ["WebImageSVG"]),
        // TIFF on libtiff.
        .library(name: "WebImageTIFF", targets: ["WebImageTIFF"]),
        // PDF pages drawn by poppler (SDWebImagePDFCoder's counterpart).
        .library(name: "WebImagePDF", targets: ["WebImagePDF"]),
        // Decoding in sandboxed worker processes (libseccomp), for services that decode strangers' images.
        .library(name: "WebImageIsolation", targets: ["WebImageIsolation"]),
        .executable(name: "webimage", targets: ["webimage"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The metrics API only (no backend): counters and timers cost a no-op call until the
        // program bootstraps a backend (swift-prometheus, statsd, ...).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // The tracing API only: spans cost a no-op tracer's calls until the program bootstraps one.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
        // The metrics backend of the PrometheusMetrics example and of the image server's /metrics.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The image server (WebImageServer) only.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Hummingbird's own dependency: the HTTP parts its connection handlers see (the server's
        // idle-connection tracker).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
    ],
    targets: [
        // C shim over libpng, libjpeg-turbo, libwebp (+demux, mux) and giflib, and the MD5 and
        // SHA-256 of OpenSSL's libcrypto (already there for libcurl's TLS; swift-crypto would
        // compile BoringSSL on every first build). Every setjmp/longjmp stays inside these C
        // functions; Swift sees status codes.
        .systemLibrary(
            name: "CSystemCodecs",
            path: "Sources/CSystemCodecs",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev", "libjpeg-dev", "libwebp-dev", "libgif-dev", "libssl-dev", "liblcms2-dev"])]
        ),
        .target(
            name: "CWebImageCodecs",
            dependencies: ["CSystemCodecs"],
            linkerSettings: ["png16", "jpeg", "webp", "webpdemux", "webpmux", "gif", "z", "deflate", "crypto", "lcms2"].map { .linkedLibrary($0) }
        ),
        // The OS calls (extended attributes, birth time, thread names, glibc's allocator): a shim
        // of their own, apart from the codecs.
        .target(name: "CWebImageSystem"),
        // libcurl as a system module (used by the HTTP loader).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(
            name: "WebImage",
            dependencies: [
                "CWebImageCodecs", "CWebImageSystem", "CCurl",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // AVIF on libavif (Debian's libavif-dev, with the AV1 codecs Debian builds it with: dav1d,
        // aom, rav1e, SVT-AV1): a C shim linking the system library, and the Swift plug-in.
        .target(name: "CWebImageAVIF", dependencies: ["CWebImageCodecs"], linkerSettings: [.linkedLibrary("avif")]),
        .target(name: "WebImageAVIF", dependencies: ["WebImage", "CWebImageAVIF"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // HEIC/HEIF on libheif (Debian's libheif-dev: libde265 to decode HEVC, x265 to encode it).
        .target(name: "CWebImageHEIF", dependencies: ["CWebImageCodecs"], linkerSettings: [.linkedLibrary("heif")]),
        .target(name: "WebImageHEIF", dependencies: ["WebImage", "CWebImageHEIF"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // JPEG XL on libjxl (Debian's libjxl-dev).
        .target(name: "CWebImageJXL", dependencies: ["CWebImageCodecs"], linkerSettings: [.linkedLibrary("jxl")]),
        .target(name: "WebImageJXL", dependencies: ["WebImage", "CWebImageJXL"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // SVG on librsvg (Debian's librsvg2-dev, with cairo and GLib).
        .systemLibrary(name: "CRsvg", pkgConfig: "cairo", providers: [.apt(["librsvg2-dev"])]),
        .target(name: "CWebImageSVG", dependencies: ["CWebImageCodecs", "CRsvg"],
                linkerSettings: ["rsvg-2", "cairo", "gobject-2.0", "glib-2.0"].map { .linkedLibrary($0) }),
        .target(name: "WebImageSVG", dependencies: ["WebImage", "CWebImageSVG"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // TIFF on libtiff (Debian's libtiff-dev).
        .target(name: "CWebImageTIFF", dependencies: ["CWebImageCodecs"], linkerSettings: [.linkedLibrary("tiff")]),
        .target(name: "WebImageTIFF", dependencies: ["WebImage", "CWebImageTIFF"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // PDF on poppler's GLib binding (Debian's libpoppler-glib-dev), drawn with cairo.
        .systemLibrary(name: "CPoppler", pkgConfig: "poppler-glib", providers: [.apt(["libpoppler-glib-dev"])]),
        .target(name: "CWebImagePDF", dependencies: ["CWebImageCodecs", "CPoppler"]),
        .target(name: "WebImagePDF", dependencies: ["WebImage", "CWebImagePDF"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // Decoding workers: their spawn, descriptor passing, shared memory and lock-down
        // (rlimits, prctl, a seccomp filter through Debian's libseccomp-dev).
        .target(name: "CWebImageIsolation", linkerSettings: [.linkedLibrary("seccomp")]),
        .target(name: "WebImageIsolation", dependencies: ["WebImage", "CWebImageIsolation"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // libmemcached as a system module (used by the shared cache tier only).
        .systemLibrary(
            name: "CMemcached",
            pkgConfig: "libmemcached",
            providers: [.apt(["libmemcached-dev"])]
        ),
        .target(
            name: "WebImageMemcached",
            dependencies: [
                "WebImage", "CMemcached",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .target(
            name: "WebImageServer",
            dependencies: [
                "WebImage", "WebImageMemcached", "WebImageIsolation", "CWebImageCodecs", "CWebImageSystem",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "webimage",
            dependencies: [
                "WebImage", "WebImageMemcached", "WebImageServer", "WebImageIsolation", "WebImageAVIF", "WebImageHEIF", "WebImageJXL", "WebImageSVG", "WebImageTIFF", "WebImagePDF",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                // The demo's local HTTP server.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            // The samples are compiled in (EmbeddedSamples.swift, made from this folder by
            // scripts/embed-samples.py), so that the binary works wherever it is copied.
            exclude: ["Samples"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The runnable examples (Examples/Sources), part of this package so that they share its
        // build: `swift run BasicLoading`. They are targets, not products: a package that depends
        // on WebImage never builds them.
        .target(name: "ExampleSupport", dependencies: ["WebImage"], path: "Examples/Sources/ExampleSupport",
                swiftSettings: [.swiftLanguageMode(.v6)]),
    ] + ["BasicLoading", "ProgressStream", "Cancellation", "Prefetching", "Thumbnails", "CustomLoaderAndCache"].map {
        .executableTarget(name: $0, dependencies: ["ExampleSupport", "WebImage"], path: "Examples/Sources/\($0)",
                          swiftSettings: [.swiftLanguageMode(.v6)])
    } + [
        .executableTarget(name: "PrometheusMetrics", dependencies: [
            "ExampleSupport", "WebImage",
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "Metrics", package: "swift-metrics"),
        ], path: "Examples/Sources/PrometheusMetrics", swiftSettings: [.swiftLanguageMode(.v6)]),
        // The child process of the crash-consistency test: stores entries until it is killed.
        .executableTarget(name: "cache-crash-writer", dependencies: ["WebImage"], path: "Tests/CacheCrashWriter",
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        .testTarget(
            name: "WebImageTests",
            dependencies: [
                "WebImage", "WebImageMemcached", "WebImageServer", "WebImageIsolation", "WebImageAVIF", "WebImageHEIF", "WebImageJXL", "WebImageSVG", "WebImageTIFF", "WebImagePDF",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Inputs read from disk by the tests (fuzzer findings replayed), not bundled.
            exclude: ["Fixtures"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)

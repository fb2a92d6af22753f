import BenchSupport
import Foundation
import WebImage

// Transformer benchmarks for issue "transformers", beside Pillow (and libvips) measured by
// ../shared/bench/anchors.sh in the same run. Usage: TransformBenchmarks FIXTURES_DIR [ANCHORS_FILE]

let run = BenchRun(usage: "TransformBenchmarks")
let anchors = run.anchors, fixtures = run.fixtures
func f(_ v: Double) -> String { formatted(v) }
func median(_ runs: Int, _ body: () throws -> Void) rethrows -> Double { try medianMilliseconds(runs: runs, body) }

let big = try Image(contentsOf: fixtures.appendingPathComponent("rgba-4000x3000.png"))
let medium = try Image(contentsOf: fixtures.appendingPathComponent("rgba-1024x768.png"))
let jpeg = try Data(contentsOf: fixtures.appendingPathComponent("photo-4000x3000.jpg"))

// Each row: its name, runs, the job, and the anchors (skipped unless it matches WEBIMAGE_BENCH_ROW).
let jobs: [(String, Int, () throws -> Void, [(String, String)])] = [
    ("4000x3000 RGBA -> 256x192, Lanczos-3", 7, { _ = try ResizingTransformer(width: 256, height: 192).transform(big) },
     [("Pillow LANCZOS", "resize_rgba12mp_to256_pillow"), ("vips resize (process)", "resize_rgba12mp_to256_vips_process")]),
    ("Gaussian blur r=8, 1024x768 RGBA", 11, { _ = try BlurTransformer(radius: 8).transform(medium) },
     [("Pillow GaussianBlur(8)", "blur_r8_1024_pillow")]),
    ("rotate 30 degrees, fit size, 1024x768 RGBA", 11, { _ = try RotationTransformer(angle: .pi / 6, fitSize: true).transform(medium) },
     [("Pillow rotate(30, BILINEAR, expand)", "rotate30_1024_pillow")]),
    ("12 MP JPEG -> 256 px thumbnail (decode at size)", 15, { _ = try Image(data: jpeg, options: ImageDecodingOptions(maxPixelSize: 256)) },
     [("Pillow draft + thumbnail", "jpeg12mp_thumb256_pillow_draft"), ("vipsthumbnail (process)", "jpeg12mp_thumb256_vipsthumbnail")]),
]
let rows: [(String, Double, [(String, String)])] = try jobs.filter { wantsRow($0.0) }.map { name, runs, job, keys in
    (name, try median(runs, job), keys)
}
print("| benchmark | ours ms | anchors (ms, ours / anchor) |")
print("| --- | ---: | --- |")
for (name, value, keys) in rows {
    let text = keys.compactMap { label, key in anchors[key].map { "\(label) \(f($0)) (\(f(value / $0))x)" } }.joined(separator: "; ")
    print("| \(name) | \(f(value)) | \(text) |")
}
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date())")

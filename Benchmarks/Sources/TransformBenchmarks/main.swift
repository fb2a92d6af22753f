import BenchSupport
import Foundation
import WebImage

// Transformer benchmarks for issue "transformers", beside Pillow (and libvips) measured by
// ../shared/bench/anchors.sh in the same run. Usage: TransformBenchmarks FIXTURES_DIR [ANCHORS_FILE]

let run = BenchRun(usage: "TransformBenchmarks")
let anchors = run.anchors, fixtures = run.fixtures
func f(_ v: Double) -> String { formatted(v) }

let big = try Image(contentsOf: fixtures.appendingPathComponent("rgba-4000x3000.png"))
let medium = try Image(contentsOf: fixtures.appendingPathComponent("rgba-1024x768.png"))
let framed = try PaddingTransformer(top: 30, right: 30, bottom: 10, left: 20, color: .white).transform(medium.bitmap)
let mark = try ResizingTransformer(width: 128, height: 96).transform(medium.bitmap)
let jpeg = try Data(contentsOf: fixtures.appendingPathComponent("photo-4000x3000.jpg"))

// Each row: its name, rounds, the job, Pillow's row in the worker and in anchors.sh, and the
// other anchors (skipped unless it matches WEBIMAGE_BENCH_ROW).
let jobs: [(String, Int, () throws -> Void, (String, String, String), [(String, String)])] = [
    ("4000x3000 RGBA -> 256x192, Lanczos-3", 7, { _ = try ResizingTransformer(width: 256, height: 192).transform(big) },
     ("Pillow LANCZOS", "resize", "resize_rgba12mp_to256_pillow"), [("vips resize (process)", "resize_rgba12mp_to256_vips_process")]),
    ("Gaussian blur r=8, 1024x768 RGBA", 11, { _ = try BlurTransformer(radius: 8).transform(medium) },
     ("Pillow GaussianBlur(8)", "blur", "blur_r8_1024_pillow"), []),
    ("rotate 30 degrees, fit size, 1024x768 RGBA", 11, { _ = try RotationTransformer(angle: .pi / 6, fitSize: true).transform(medium) },
     ("Pillow rotate(30, BILINEAR, expand)", "rotate", "rotate30_1024_pillow"), []),
    ("12 MP JPEG -> 256 px thumbnail (decode at size)", 15, { _ = try Image(data: jpeg, options: ImageDecodingOptions(maxPixelSize: 256)) },
     ("Pillow draft + thumbnail", "thumbnail", "jpeg12mp_thumb256_pillow_draft"), [("vipsthumbnail (process)", "jpeg12mp_thumb256_vipsthumbnail")]),
]
// The image server's options beside pyvips doing the same operation (VipsRows), on 1024x768 RGBA.
let options: [(String, Int, () throws -> Void, String)] = [
    ("sh:1 (unsharp mask, sigma 1)", 11, { _ = try SharpeningTransformer(sigma: 1).transform(medium.bitmap) }, "sharpen"),
    ("g:sm smart crop to 300x300", 11, { _ = try SmartCroppingTransformer(width: 300, height: 300).transform(medium.bitmap) }, "smartcrop"),
    ("pix:16", 11, { _ = try PixelatingTransformer(size: 16).transform(medium.bitmap) }, "pixelate"),
    ("a:20:1.5:0.5 (brightness, contrast, saturation)", 11, {
        _ = try ColorAdjustingTransformer(brightness: 20, contrast: 1.5, saturation: 0.5).transform(medium.bitmap)
    }, "adjust"),
    ("t:10 (trim a white frame)", 11, { _ = try TrimmingTransformer(threshold: 10, color: .white).transform(framed) }, "trim"),
    ("wm:0.5 (128x96 watermark)", 11, { _ = try WatermarkTransformer(mark: mark, placement: .at(x: 880, y: 660), opacity: 0.5).transform(medium.bitmap) },
     "watermark"),
    ("pd:10:20 / ex:1 (padding, extension)", 11, {
        _ = try PaddingTransformer(top: 10, right: 20, bottom: 10, left: 20, color: .white).transform(medium.bitmap)
    }, "padding"),
]
// Instruction counts (Benchmarks/instructions.sh): ours only (Pillow runs in its own process).
if InstructionCount.isListing || InstructionCount.isCounting {
    for (name, _, job, _, _) in jobs where wantsRow(name) { try InstructionCount.handle(name, sides: [job]) }
    for (name, _, job, _) in options where wantsRow(name) { try InstructionCount.handle(name, sides: [job]) }
    if InstructionCount.isCounting { fatalError("no transformer row named \(ProcessInfo.processInfo.environment["WEBIMAGE_COUNT_ROW"] ?? "")") }
    exit(0)
}
// Pillow runs in the same rounds as ours (PythonWorker); libvips, run as a process, comes from
// anchors.sh earlier in the run. Without the venv, Pillow's figures come from anchors.sh too.
let pillow = PythonWorker(python: (ProcessInfo.processInfo.environment["BENCH_VENV"] ?? "/tmp/bench-venv") + "/bin/python",
                          script: PythonWorker.pillow, fixtures: fixtures)
let vips = PythonWorker(python: (ProcessInfo.processInfo.environment["VIPS_VENV"] ?? "/tmp/vips-venv") + "/bin/python",
                        script: VipsRows.script, fixtures: fixtures)

let clock = ContinuousClock()
print(pillow == nil
      ? "Ours: medians of N runs; anchors from anchors.sh earlier in the run (no Pillow worker: \(ProcessInfo.processInfo.environment["BENCH_VENV"] ?? "/tmp/bench-venv") missing)."
      : "Ours and Pillow: medians of interleaved rounds (Pillow in a process of its own, timed inside Python), ranges in brackets; libvips from anchors.sh earlier in the run.")
print("")
print("| benchmark | ours ms | anchors (ms, ours / anchor) |")
print("| --- | ---: | --- |")
for (name, runs, job, (pillowLabel, pillowRow, pillowKey), others) in jobs where wantsRow(name) {
    var anchorsText: [String] = []
    let ours: Spread
    if let pillow {
        let spreads = try interleaved(rounds: runs, [
            { milliseconds(try clock.measure(job)) },
            { pillow.time(pillowRow) },
        ])
        ours = spreads[0]
        anchorsText.append("\(pillowLabel) \(spreads[1].text) (\(f(ours.median / spreads[1].median))x, same rounds)")
    } else {
        ours = Spread(samples: try (0..<runs).map { _ in milliseconds(try clock.measure(job)) })
        if let value = anchors[pillowKey] { anchorsText.append("\(pillowLabel) \(f(value)) (\(f(ours.median / value))x)") }
    }
    for (label, key) in others {
        if let value = anchors[key] { anchorsText.append("\(label) \(f(value)) (\(f(ours.median / value))x)") }
    }
    print("| \(name) | \(ours.text) | \(anchorsText.joined(separator: "; ")) |")
}
print("")
if let vips {
    print("Image server options against pyvips (libvips 8.18, its default threads), interleaved rounds, 1024x768 RGBA in memory:")
    print("")
    print("| option | ours ms | pyvips ms | ours / pyvips |")
    print("| --- | ---: | ---: | ---: |")
    for (name, runs, job, row) in options where wantsRow(name) {
        let spreads = try interleaved(rounds: runs, [{ milliseconds(try clock.measure(job)) }, { vips.time(row) }])
        print("| \(name) | \(spreads[0].text) | \(spreads[1].text) | \(f(spreads[0].median / spreads[1].median))x |")
    }
} else {
    print("(no pyvips: \(ProcessInfo.processInfo.environment["VIPS_VENV"] ?? "/tmp/vips-venv") missing; the options' rows need it)")
}
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date())")

import BenchSupport
import CRawDecoders
import CWebImageCodecs
import Foundation
import WebImage
import WebImageIsolation

// The isolated-decode row starts this program again as its decoding worker.
DecodingWorker.runIfRequested()

// Decode benchmarks for issue "codecs": our decoders against the raw C libraries called directly
// in the same process, plus the anchors measured by ../shared/bench/anchors.sh in the same run.
// Usage: CodecBenchmarks FIXTURES_DIR [ANCHORS_FILE]

let run = BenchRun(usage: "CodecBenchmarks")
let anchors = run.anchors
func load(_ name: String) -> Data { run.load(name) }

struct Row { var name: String; var ours: Spread; var floor: Spread; var floorName: String; var anchors: [(String, Double)] }
var rows: [Row] = []
let clock = ContinuousClock()

/// Ours and the raw C floor in `runs` interleaved rounds (after a warm-up round); skipped unless
/// its name matches `WEBIMAGE_BENCH_ROW` (`scripts/bench.sh --quick`).
@MainActor func bench(_ name: String, runs: Int, floorName: String, anchorKeys: [(String, String)],
                      ours: @escaping () throws -> Void, raw: @escaping () -> Int32) throws {
    guard wantsRow(name) else { return }
    let floor = { precondition(raw() == 0, "raw decode failed") }
    if InstructionCount.isListing || InstructionCount.isCounting {
        try InstructionCount.handle(name, sides: [ours, floor])
        return
    }
    let spreads = try interleaved(rounds: runs, [
        { milliseconds(try clock.measure(ours)) },
        { milliseconds(clock.measure(floor)) },
    ])
    let found = anchorKeys.compactMap { label, key in anchors[key].map { (label, $0) } }
    rows.append(Row(name: name, ours: spreads[0], floor: spreads[1], floorName: floorName, anchors: found))
}

func withBytes<R>(_ data: Data, _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
    data.withUnsafeBytes { body($0.bindMemory(to: UInt8.self).baseAddress!, $0.count) }
}

let jpeg = load("photo-4000x3000.jpg")
let progressive = load("photo-4000x3000-progressive.jpg")
let png = load("rgba-1024x768.png")
let webpLossy = load("photo-1024x768.webp")
let webpLossless = load("rgba-1024x768-lossless.webp")
let gif = load("anim-400x300-30f.gif")
let awebp = load("anim-400x300-30f.webp")
let preload = ImageDecodingOptions(preloadAllFrames: true)

try bench("12 MP JPEG decode", runs: 9, floorName: "libjpeg-turbo direct",
          anchorKeys: [("tjbench", "jpeg12mp_decode_libjpegturbo"), ("Pillow", "jpeg12mp_decode_pillow")],
          ours: { _ = try Image(data: jpeg) }, raw: { withBytes(jpeg) { raw_jpeg_decode($0, $1, 8) } })
try bench("12 MP progressive JPEG decode", runs: 5, floorName: "libjpeg-turbo direct",
          anchorKeys: [("Pillow", "jpeg12mp_progressive_decode_pillow")],
          ours: { _ = try Image(data: progressive) }, raw: { withBytes(progressive) { raw_jpeg_decode($0, $1, 8) } })
try bench("12 MP JPEG -> 256 px (decode at size)", runs: 15, floorName: "libjpeg-turbo 1/8 direct",
          anchorKeys: [("djpeg -scale 1/8", "jpeg12mp_decode_scale1_8_djpeg_process"), ("Pillow draft+thumbnail", "jpeg12mp_thumb256_pillow_draft"),
                       ("Pillow full+LANCZOS", "jpeg12mp_thumb256_pillow_nodraft"), ("vipsthumbnail", "jpeg12mp_thumb256_vipsthumbnail")],
          ours: { _ = try Image(data: jpeg, options: ImageDecodingOptions(maxPixelSize: 256)) },
          raw: { withBytes(jpeg) { raw_jpeg_decode($0, $1, 1) } })
// A 12 MP RGB PNG to a thumbnail: its rows reduced as libpng inflates them (the full-size
// pixels never exist), against libpng inflating every row and keeping none.
let png12 = load("photo-4000x3000.png")
try bench("12 MP PNG -> 256 px (rows reduced while inflated)", runs: 7, floorName: "libpng inflating every row", anchorKeys: [],
          ours: { _ = try Image(data: png12, options: ImageDecodingOptions(maxPixelSize: 256)) },
          raw: { withBytes(png12) { raw_png_rows($0, $1) } })
if wantsRow("12 MP PNG -> 256 px"), !InstructionCount.isListing, !InstructionCount.isCounting {
    // What the thumbnail cost before: the whole decode (48 MB of pixels), reduced after.
    let rounds = try interleaved(rounds: 7, [
        { try ms { _ = try Image(data: png12, options: ImageDecodingOptions(maxPixelSize: 256)) } },
        { try ms { _ = try Image(data: png12).bitmap.areaDownscaled(toWidth: 256, height: 192) } },
    ])
    print("12 MP PNG -> 256 px: rows reduced while inflated \(rounds[0].text) ms; decoded whole, then reduced \(rounds[1].text) ms")
}
try bench("1024x768 RGBA PNG decode", runs: 21, floorName: "libpng simplified API",
          anchorKeys: [("Pillow", "png1024_decode_pillow")],
          ours: { _ = try Image(data: png) }, raw: { withBytes(png) { raw_png_decode($0, $1) } })
// Depth (issue #59): the same PNG written with 16-bit samples, decoded at 16 bits a channel
// (`bitDepth = .source`), against libpng's own reader keeping them.
if wantsRow("1024x768 16-bit PNG decode at depth") {
    let png16 = try Image(bitmap: Image(data: png).bitmap.converted(to: .rgba16)).encoded(as: .png)
    var deep = ImageDecodingOptions()
    deep.bitDepth = .source
    try bench("1024x768 16-bit PNG decode at depth", runs: 21, floorName: "libpng, 16-bit samples kept", anchorKeys: [],
              ours: { _ = try Image(data: png16, options: deep) }, raw: { withBytes(png16) { raw_png_decode_16($0, $1) } })
}
try bench("1024x768 lossy WebP decode", runs: 21, floorName: "WebPDecodeRGBA",
          anchorKeys: [("Pillow", "webp1024_lossy_decode_pillow"), ("dwebp process", "webp1024_lossy_decode_dwebp_process")],
          ours: { _ = try Image(data: webpLossy) }, raw: { withBytes(webpLossy) { raw_webp_decode($0, $1) } })
try bench("1024x768 lossless WebP decode", runs: 21, floorName: "WebPDecodeRGBA",
          anchorKeys: [("Pillow", "webp1024_lossless_decode_pillow")],
          ours: { _ = try Image(data: webpLossless) }, raw: { withBytes(webpLossless) { raw_webp_decode($0, $1) } })
try bench("30-frame GIF, all frames", runs: 15, floorName: "giflib DGifSlurp + draw",
          anchorKeys: [("Pillow", "gif30_all_frames_pillow")],
          ours: { _ = try Image(data: gif, options: preload) }, raw: { withBytes(gif) { raw_gif_decode_all($0, $1) } })
try bench("30-frame animated WebP, all frames", runs: 15, floorName: "WebPAnimDecoder",
          anchorKeys: [("Pillow", "awebp30_all_frames_pillow")],
          ours: { _ = try Image(data: awebp, options: preload) }, raw: { withBytes(awebp) { raw_webp_anim_decode_all($0, $1) } })

// Tone mapping (issue #59), counted only (ModernCodecBenchmarks times it on the 10-bit AVIF):
// the 12 MP photo's pixels widened to 16 bits and taken as a PQ signal over BT.2020 primaries,
// mapped to 8-bit sRGB on one thread, against the same pixels narrowed by their high bytes.
if (InstructionCount.isListing || InstructionCount.isCounting), wantsRow("12 MP PQ tone map to 8 bits, one thread") {
    let deep = try Image(data: jpeg).bitmap.converted(to: .rgba16)
    let count = deep.width * deep.height
    let output = UnsafeMutablePointer<UInt8>.allocate(capacity: count * 4)
    var tones: OpaquePointer?
    precondition(wi_tone_map_create(9, 16, 0, &tones) == 0)
    func samples(_ body: (UnsafePointer<UInt16>) -> Void) {
        deep.withUnsafeBytes { body($0.bindMemory(to: UInt16.self).baseAddress!) }
    }
    try InstructionCount.handle("12 MP PQ tone map to 8 bits, one thread", sides: [
        { samples { wi_tone_map_apply(tones, $0, count, output, 0) } },
        { samples { raw_narrow_16_to_8($0, count, output) } },
    ])
}
// A progressive load decodes its bytes once (issue 14): the streaming decoder fed the file in
// 16 KB chunks (what libcurl hands over), then its final image, against one whole-file decode.
func streamed(_ data: Data, previews: Int) throws {
    guard let decoder = JPEGCoder().makeIncrementalDecoder(options: .init()) else { fatalError("no JPEG stream decoder") }
    let step = 16 << 10
    var offset = 0, nextPreview = previews > 0 ? data.count / (previews + 1) : Int.max, shown = 0
    while offset < data.count {
        let end = min(data.count, offset + step)
        try decoder.append(data[offset..<end])
        offset = end
        if offset >= nextPreview, offset < data.count {
            if try decoder.preview() != nil { shown += 1 }
            nextPreview += data.count / (previews + 1)
        }
    }
    _ = try decoder.finish()
}
// Instruction counts: every countable row was listed, or the one asked for was not found.
if InstructionCount.isListing { exit(0) }
if InstructionCount.isCounting { fatalError("no codec row named \(ProcessInfo.processInfo.environment["WEBIMAGE_COUNT_ROW"] ?? "")") }
func ms(_ body: () throws -> Void) rethrows -> Double { milliseconds(try clock.measure(body)) }
func f(_ v: Double) -> String { formatted(v) }
print("Medians of interleaved rounds (ours and its floor in the same rounds), with the rounds' range in brackets;")
print("anchors from ../shared/bench/anchors.sh, earlier in the run.")
print("")
print("| benchmark | ours ms | raw C ms (\u{2009}floor\u{2009}) | ours / raw | anchors (ms, ours / anchor) |")
print("| --- | ---: | ---: | ---: | --- |")
for row in rows {
    let anchorText = row.anchors.map { "\($0.0) \(f($0.1)) (\(f(row.ours.median / $0.1))x)" }.joined(separator: "; ")
    print("| \(row.name) | \(row.ours.text) | \(row.floor.text) (\(row.floorName)) | \(f(row.ours.median / row.floor.median))x | \(anchorText) |")
}
if wantsRow("progressive load") {
    let progressiveRounds = try interleaved(rounds: 7, [
        { try ms { _ = try Image(data: progressive) } },
        { try ms { try streamed(progressive, previews: 0) } },
        { try ms { try streamed(progressive, previews: 9) } },
        { try ms { _ = try Image(data: jpeg) } },
        { try ms { try streamed(jpeg, previews: 0) } },
        { try ms { try streamed(jpeg, previews: 9) } },
    ])
    let (wholeProgressive, streamedFast, streamedSlow) = (progressiveRounds[0], progressiveRounds[1], progressiveRounds[2])
    let (wholeBaseline, streamedBaseline, streamedBaselineSlow) = (progressiveRounds[3], progressiveRounds[4], progressiveRounds[5])
    func ratio(_ a: Spread, _ b: Spread) -> String { f(a.median / b.median) + "x" }
    print("")
    print("| progressive load (decode once) | streamed ms | one whole-file decode ms | ratio | target |")
    print("| --- | ---: | ---: | ---: | --- |")
    print("| 12 MP progressive JPEG in 16 KB chunks, final image only (a fast network: no preview is due) | \(streamedFast.text) | \(wholeProgressive.text) | \(ratio(streamedFast, wholeProgressive)) | <= 1.1x |")
    print("| the same with a preview at every tenth of the data (a slow network: 9 output passes) | \(streamedSlow.text) | \(wholeProgressive.text) | \(ratio(streamedSlow, wholeProgressive)) | reported |")
    print("| 12 MP baseline JPEG in 16 KB chunks, final image only | \(streamedBaseline.text) | \(wholeBaseline.text) | \(ratio(streamedBaseline, wholeBaseline)) | <= 1.1x |")
    print("| the same with a preview at every tenth of the data (9 copies of the rows so far) | \(streamedBaselineSlow.text) | \(wholeBaseline.text) | \(ratio(streamedBaselineSlow, wholeBaseline)) | reported |")
}
if wantsRow("decode at size") {
    // Area averaging alone: the 12 MP decode to 256 px, and the image server's case (a 3/8 DCT
    // decode of 12 MP, 1500x1125, to the 1280x960 that fills a 1280x720 crop).
    let fullBitmap = try Image(data: jpeg).bitmap
    let serverBitmap = try Image(data: jpeg, options: ImageDecodingOptions(maxPixelSize: 1500)).bitmap
    let sizeRounds = try interleaved(rounds: 7, [
        { try ms { _ = try Image(data: jpeg) } },
        { try ms { _ = try Image(data: jpeg, options: ImageDecodingOptions(maxPixelSize: 256)) } },
        { try ms { _ = try Image(data: jpeg).bitmap.areaDownscaled(toWidth: 256, height: 192) } },
        { ms { _ = fullBitmap.areaDownscaled(toWidth: 256, height: 192) } },
        { ms { _ = serverBitmap.areaDownscaled(toWidth: 1280, height: 960) } },
    ])
    let (fullJPEG, atSize, fullPlusResize) = (sizeRounds[0].median, sizeRounds[1].median, sizeRounds[2].median)
    print("")
    print("decode at size vs full decode alone (before any resize): \(f(fullJPEG / atSize))x faster")
    print("area averaging alone: 4000x3000 -> 256x192 \(sizeRounds[3].text) ms; 1500x1125 -> 1280x960 \(sizeRounds[4].text) ms")
    print("decode at size vs our full decode + area resize (\(f(fullPlusResize)) ms): \(f(fullPlusResize / atSize))x faster")
    if let nodraft = anchors["jpeg12mp_thumb256_pillow_nodraft"] {
        print("decode at size vs full decode + LANCZOS (Pillow): \(f(nodraft / atSize))x faster")
    }
}
if wantsRow("metadata read") {
    // ImageMetadata(reading:) of the 12 MP JPEG with an EXIF block spliced in after SOI (the
    // header's segments only, no pixels), against its decode. Target: under 1% of the decode.
    let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
    let payload = Array("Exif\0\0".utf8) + tiff
    var tagged = Data(jpeg.prefix(2))
    tagged += [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    tagged += jpeg.dropFirst(2)
    precondition(ImageMetadata(reading: tagged).orientation == .right, "the spliced EXIF is read")
    let reads = 1000
    let rounds = try interleaved(rounds: 7, [
        { ms { for _ in 0..<reads { _ = ImageMetadata(reading: tagged) } } },
        { try ms { _ = try Image(data: tagged) } },
    ])
    let read = rounds[0].median / Double(reads), decode = rounds[1].median
    print("")
    print("metadata read of a 12 MP JPEG: \(f(read * 1000)) us; its decode \(f(decode)) ms; the read is \(String(format: "%.4f", 100 * read / decode))% of the decode (target < 1%)")
}
if wantsRow("isolated decode") {
    // The same decode at size in this process and through a decoding worker (WebImageIsolation:
    // the data into shared memory, a message each way, the thumbnail's pixels back), one worker,
    // one decode at a time.
    var configuration = DecodingWorkerPool.Configuration()
    configuration.workerCount = 1
    let pool = DecodingWorkerPool(configuration: configuration)
    let options = ImageDecodingOptions(maxPixelSize: 256)
    let tiny = try Image(bitmap: Bitmap(width: 16, height: 16)).encoded(as: .png)
    let isolatedRounds = try await interleaved(rounds: 15, [
        { try ms { _ = try Image(data: jpeg, options: options) } },
        {
            let start = clock.now
            _ = try await pool.decode(jpeg, options: options)
            return milliseconds(clock.now - start)
        },
        { try ms { _ = try Image(data: png) } },
        {
            let start = clock.now
            _ = try await pool.decode(png, options: ImageDecodingOptions())
            return milliseconds(clock.now - start)
        },
        { try ms { for _ in 0..<100 { _ = try Image(data: tiny) } } / 100 },
        {
            let start = clock.now
            for _ in 0..<100 { _ = try await pool.decode(tiny, options: ImageDecodingOptions()) }
            return milliseconds(clock.now - start) / 100
        },
    ])
    pool.shutdown()
    let jpegRatio = isolatedRounds[1].ratios(over: isolatedRounds[0]).median
    let pngRatio = isolatedRounds[3].ratios(over: isolatedRounds[2]).median
    print("")
    print("| isolated decode (WebImageIsolation) | in a worker ms | in this process ms | worker / process (round by round) | target |")
    print("| --- | ---: | ---: | ---: | --- |")
    print("| 12 MP JPEG -> 256 px | \(isolatedRounds[1].text) | \(isolatedRounds[0].text) | \(f(jpegRatio))x | <= 1.10x |")
    print("| 1024x768 RGBA PNG, full size (3 MB of pixels back) | \(isolatedRounds[3].text) | \(isolatedRounds[2].text) | \(f(pngRatio))x | reported |")
    print("| 16x16 PNG (a round trip's fixed cost) | \(isolatedRounds[5].text) | \(isolatedRounds[4].text) | \(f(isolatedRounds[5].ratios(over: isolatedRounds[4]).median))x | reported |")
}
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date())")

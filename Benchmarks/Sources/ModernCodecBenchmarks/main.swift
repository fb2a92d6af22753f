import BenchSupport
import CRawModern
import CWebImageCodecs
import Foundation
import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageJXL
import WebImagePDF
import WebImageSVG

// The coder plug-ins (issue "today's formats"): a 12 MP AVIF, HEIC and JPEG XL decode and a
// 1024x768 AVIF and JPEG XL encode against libavif, libheif and libjxl called directly in the
// same process (the floor), with the reference tools and Pillow's plug-ins as anchors measured
// by Benchmarks/modern-anchors.sh earlier in the same run.
// Usage: ModernCodecBenchmarks FIXTURES_DIR [ANCHORS_FILE]

let run = BenchRun(usage: "ModernCodecBenchmarks")
let anchors = run.anchors
let coders = ImageCoders([AVIFCoder(), HEIFCoder(), JXLCoder(), SVGCoder(), PDFCoder()] + ImageCoders.builtIn)
let clock = ContinuousClock()
func ms(_ body: () throws -> Void) rethrows -> Double { milliseconds(try clock.measure(body)) }
func f(_ v: Double) -> String { formatted(v) }
func withBytes<R>(_ data: Data, _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
    data.withUnsafeBytes { body($0.bindMemory(to: UInt8.self).baseAddress!, $0.count) }
}

struct Row { var name: String; var ours: Spread; var floor: Spread; var ratio: Spread; var floorName: String; var target: String; var anchors: [(String, Double)] }
var rows: [Row] = []

@MainActor func bench(_ name: String, runs: Int, floorName: String, target: String, anchorKeys: [(String, String)],
           ours: @escaping () throws -> Void, raw: @escaping () -> Int32) throws {
    guard wantsRow(name) else { return }
    let spreads = try interleaved(rounds: runs, [
        { try ms(ours) },
        { ms { precondition(raw() == 0, "\(name): the direct call failed") } },
    ])
    let found = anchorKeys.compactMap { label, key in anchors[key].map { (label, $0) } }
    rows.append(Row(name: name, ours: spreads[0], floor: spreads[1], ratio: spreads[0].ratios(over: spreads[1]),
                    floorName: floorName, target: target, anchors: found))
}

let avif = run.load("photo-4000x3000.avif"), heic = run.load("photo-4000x3000.heic"), jxl = run.load("photo-4000x3000.jxl")
let source = try Image(data: run.load("photo-1024x768.png"))
let rgba = source.bitmap.rgba
let (w, h) = (UInt32(source.width), UInt32(source.height))

try bench("12 MP AVIF decode", runs: 7, floorName: "libavif direct", target: "<= 1.03x",
          anchorKeys: [("avifdec process", "avif12mp_decode_avifdec_process"), ("Pillow", "avif12mp_decode_pillow")],
          ours: { _ = try coders.decode(avif) }, raw: { withBytes(avif) { raw_avif_decode($0, $1) } })
// Depth (issue #59): a 12 MP AVIF coded in 10 bits decoded at 16 bits a channel
// (`bitDepth = .source`), against libavif converting to 16 bits directly.
if wantsRow("12 MP 10-bit AVIF decode at depth") {
    let avif10 = run.load("photo-4000x3000-10bit.avif")
    var deep = ImageDecodingOptions()
    deep.bitDepth = .source
    try bench("12 MP 10-bit AVIF decode at depth", runs: 7, floorName: "libavif direct, 16 bits", target: "<= 1.05x", anchorKeys: [],
              ours: { _ = try coders.decode(avif10, options: deep) }, raw: { withBytes(avif10) { raw_avif_decode_depth($0, $1, 16) } })
}
// Depth (issue #59): a 12 MP HEIC coded in 10 bits and a 12 MP JPEG XL that says 16 bits,
// decoded at 16 bits a channel, against their libraries giving 16-bit samples directly.
if wantsRow("12 MP 10-bit HEIC decode at depth") {
    let heic10 = run.load("photo-4000x3000-10bit.heic")
    var deep = ImageDecodingOptions()
    deep.bitDepth = .source
    try bench("12 MP 10-bit HEIC decode at depth", runs: 9, floorName: "libheif direct, 16-bit words", target: "<= 1.05x", anchorKeys: [],
              ours: { _ = try coders.decode(heic10, options: deep) }, raw: { withBytes(heic10) { raw_heif_decode_depth($0, $1, 16) } })
}
if wantsRow("12 MP 16-bit JPEG XL decode at depth") {
    let jxl16 = run.load("photo-4000x3000-16bit.jxl")
    var deep = ImageDecodingOptions()
    deep.bitDepth = .source
    try bench("12 MP 16-bit JPEG XL decode at depth", runs: 5, floorName: "libjxl direct, 16 bits", target: "<= 1.05x", anchorKeys: [],
              ours: { _ = try coders.decode(jxl16, options: deep) }, raw: { withBytes(jxl16) { raw_jxl_decode_depth($0, $1, 16) } })
}
try bench("12 MP HEIC decode", runs: 7, floorName: "libheif direct", target: "<= 1.03x",
          anchorKeys: [("heif-convert process (to JPEG)", "heic12mp_decode_heifconvert_process"), ("Pillow", "heic12mp_decode_pillow")],
          ours: { _ = try coders.decode(heic) }, raw: { withBytes(heic) { raw_heif_decode($0, $1) } })
try bench("12 MP JPEG XL decode", runs: 7, floorName: "libjxl direct", target: "<= 1.03x",
          anchorKeys: [("djxl process", "jxl12mp_decode_djxl_process"), ("Pillow", "jxl12mp_decode_pillow")],
          ours: { _ = try coders.decode(jxl) }, raw: { withBytes(jxl) { raw_jxl_decode($0, $1) } })
// Encodes at the settings of the anchors: AVIF quality 90 (quantizer 6), speed 6; JPEG XL
// quality 90 (distance 1.0), effort 7.
var sizes: [String: (Int, Int)] = [:]
try bench("1024x768 AVIF encode", runs: 5, floorName: "libavif direct", target: "<= 1.05x",
          anchorKeys: [("avifenc process", "avif1024_encode_avifenc_process"), ("Pillow", "avif1024_encode_pillow")],
          ours: { _ = try coders.encode(source, as: .avif, options: .init(quality: 0.9, effort: 0.4)) },
          raw: { var size = 0; return rgba.withUnsafeBufferPointer { raw_avif_encode($0.baseAddress, w, h, 90, 6, &size) } })
try bench("1024x768 JPEG XL encode", runs: 5, floorName: "libjxl direct", target: "<= 1.05x",
          anchorKeys: [("cjxl process", "jxl1024_encode_cjxl_process"), ("Pillow", "jxl1024_encode_pillow")],
          ours: { _ = try coders.encode(source, as: .jxl, options: .init(quality: 0.9, effort: 0.75)) },
          raw: { var size = 0; return rgba.withUnsafeBufferPointer { raw_jxl_encode($0.baseAddress, w, h, 1.0, 7, &size) } })

print("Medians of interleaved rounds (ours and its floor in the same rounds), with the rounds' range in brackets;")
print("the ratio is the median of the rounds' own ratios. Anchors from Benchmarks/modern-anchors.sh, earlier in the run.")
print("")
print("| benchmark | ours ms | direct library call ms | ours / direct | target | anchors (ms, ours / anchor) |")
print("| --- | ---: | ---: | ---: | --- | --- |")
for row in rows {
    let anchorText = row.anchors.map { "\($0.0) \(f($0.1)) (\(f(row.ours.median / $0.1))x)" }.joined(separator: "; ")
    print("| \(row.name) | \(row.ours.text) | \(row.floor.text) (\(row.floorName)) | \(f(row.ratio.median))x | \(row.target) | \(anchorText) |")
}
// A 256 px thumbnail of a 12 MP AVIF and JPEG XL: the decode at size (neither library decodes
// at a smaller scale here, so it is the full decode plus our area resize in one call) against
// the full decode followed by the resize.
if wantsRow("thumbnail") {
    for (name, data) in [("AVIF", avif), ("JPEG XL", jxl)] {
        let rounds = try interleaved(rounds: 5, [
            { try ms { _ = try coders.decode(data, options: ImageDecodingOptions(maxPixelSize: 256)) } },
            { try ms { _ = try coders.decode(data).bitmap.areaDownscaled(toWidth: 256, height: 192) } },
        ])
        print("")
        print("12 MP \(name) -> 256 px: decode at size \(rounds[0].text) ms, full decode + resize \(rounds[1].text) ms "
              + "(\(f(rounds[0].ratios(over: rounds[1]).median))x; target <= 1x)")
    }
}
// Colour (issues #35, #59): a 12 MP JPEG tagged Display P3, decoded with its values as stored
// and converted to sRGB (the default: the matrix-shaper path, on rows as they are decoded): the
// conversion's cost over the decode, against libvips's and Pillow's own conversion of the same
// file (modern-anchors.sh, one libvips thread).
if wantsRow("colour") {
    let p3 = run.load("photo-4000x3000-p3.jpg")
    let rounds = try interleaved(rounds: 7, [
        { try ms { _ = try coders.decode(p3, options: ImageDecodingOptions(colorSpace: .original)) } },
        { try ms { _ = try coders.decode(p3) } },
    ])
    let ratio = rounds[1].ratios(over: rounds[0]).median
    print("")
    print("| 12 MP Display P3 JPEG | ours ms | ours / .original | libvips ms (one thread) | Pillow ms | ours / libvips |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    let vips = anchors["p3jpeg12mp_decode_vips"], vipsSRGB = anchors["p3jpeg12mp_decode_srgb_vips"]
    let pillow = anchors["p3jpeg12mp_decode_pillow"], pillowSRGB = anchors["p3jpeg12mp_decode_srgb_pillow"]
    func cell(_ v: Double?) -> String { v.map(f) ?? "-" }
    print("| decode, values as stored (.original) | \(rounds[0].text) | 1x | \(cell(vips)) | \(cell(pillow)) | \(vips.map { f(rounds[0].median / $0) + "x" } ?? "-") |")
    print("| decode converted to sRGB (default) | \(rounds[1].text) | \(f(ratio))x (target <= 1.3x) | \(cell(vipsSRGB)) | \(cell(pillowSRGB)) | \(vipsSRGB.map { f(rounds[1].median / $0) + "x" } ?? "-") (target <= 1x) |")
}
// Tone mapping (issue #59): the 12 MP photo's 10-bit AVIF decoded at 16 bits, its values taken
// as a PQ (and an HLG) signal over BT.2020 primaries, mapped to 8-bit sRGB on one thread (the
// library bands a large image over every core; this is one core's rate).
if wantsRow("tone map") {
    var deep = ImageDecodingOptions()
    deep.bitDepth = .source
    let bitmap = try coders.decode(run.load("photo-4000x3000-10bit.avif"), options: deep).bitmap
    var pq: OpaquePointer?, hlg: OpaquePointer?
    precondition(wi_tone_map_create(9, 16, 0, &pq) == 0 && wi_tone_map_create(9, 18, 0, &hlg) == 0)
    let count = bitmap.width * bitmap.height
    let output = UnsafeMutablePointer<UInt8>.allocate(capacity: count * 4)
    func map(_ tones: OpaquePointer?) -> Double {
        ms { bitmap.withUnsafeBytes { wi_tone_map_apply(tones, $0.bindMemory(to: UInt16.self).baseAddress, count, output, 0) } }
    }
    let rounds = try interleaved(rounds: 9, [{ map(pq) }, { map(hlg) }])
    output.deallocate()
    wi_tone_map_free(pq)
    wi_tone_map_free(hlg)
    print("")
    print("| 12 MP tone-mapped to 8-bit sRGB, one thread | ours ms | target | ours / target |")
    print("| --- | ---: | ---: | ---: |")
    print("| PQ (BT.2100, BT.2020 primaries) | \(rounds[0].text) | 30 ms | \(f(rounds[0].median / 30))x |")
    print("| HLG (BT.2100, BT.2020 primaries, with its OOTF) | \(rounds[1].text) | - | - |")
}
// SVG (issue #35): a 256 px thumbnail of the corpus's gradients document, drawn at that size by
// librsvg in-process, against rsvg-convert as a process (which also writes a PNG).
if wantsRow("svg") {
    let svg = run.load("gradients.svg")
    let rounds = try interleaved(rounds: 9, [{ try ms { _ = try coders.decode(svg, options: ImageDecodingOptions(maxPixelSize: 256)) } }])
    let anchor = anchors["svg256_rsvgconvert_process"]
    print("")
    print("SVG -> 256 px thumbnail: \(rounds[0].text) ms; rsvg-convert process \(anchor.map(f) ?? "-") ms"
          + (anchor.map { " (\(f(rounds[0].median / $0))x)" } ?? ""))
}
// PDF (issue #59): a page holding the 1024x768 photo (Pillow's PDF writer, a JPEG image) as a
// 256 px thumbnail, drawn at that size by poppler in-process, against pdftoppm as a process
// (which also writes a PNG).
if wantsRow("pdf") {
    let pdf = run.load("document.pdf")
    let rounds = try interleaved(rounds: 9, [{ try ms { _ = try coders.decode(pdf, options: ImageDecodingOptions(maxPixelSize: 256)) } }])
    let anchor = anchors["pdf256_pdftoppm_process"]
    print("")
    print("PDF page -> 256 px thumbnail: \(rounds[0].text) ms; pdftoppm process \(anchor.map(f) ?? "-") ms"
          + (anchor.map { " (\(f(rounds[0].median / $0))x)" } ?? ""))
}
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date())")

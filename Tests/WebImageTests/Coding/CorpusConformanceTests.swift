import Foundation
import Testing
@testable import WebImage

/// Every file of the shared corpus against what an independent decoder (Pillow) saw, with the
/// browser/libpng rule where Pillow is known to differ (each such file listed with its reason).
@Suite struct CorpusConformanceTests {
    enum Outcome { case matched, mismatched(String), rejectedAsExpected, followedBrowserRule(String) }

    @Test func everyCorpusFileDecodesAsTheManifestSays() throws {
        var counts: [String: [String: Int]] = [:]
        var mismatches: [String] = []
        var explained: [String] = []
        let entries = Corpus.entries()
        for entry in entries {
            let path = entry["path"] as! String
            let family = entry["folder"] as! String
            let outcome = check(entry)
            let key: String
            switch outcome {
            case .matched: key = "matched"
            case .rejectedAsExpected: key = "rejected as expected"
            case .followedBrowserRule(let why): key = "browser rule"; explained.append("\(path): \(why)")
            case .mismatched(let why): key = "mismatched"; mismatches.append("\(path): \(why)")
            }
            counts[family, default: [:]][key, default: 0] += 1
        }
        for family in counts.keys.sorted() {
            let c = counts[family]!
            print("corpus \(family): \(c["matched"] ?? 0) matched, \(c["mismatched"] ?? 0) mismatched, "
                  + "\(c["rejected as expected"] ?? 0) rejected as expected, \(c["browser rule"] ?? 0) following the browser/libpng rule")
        }
        let total = counts.values.reduce(into: [String: Int]()) { sum, c in c.forEach { sum[$0.key, default: 0] += $0.value } }
        print("corpus: \(total["matched"] ?? 0) matched, \(total["mismatched"] ?? 0) mismatched, "
              + "\(total["rejected as expected"] ?? 0) rejected as expected, \(total["browser rule"] ?? 0) following the browser/libpng rule")
        for line in explained { print("  browser/libpng rule: \(line)") }
        for line in mismatches { print("  MISMATCH: \(line)") }
        #expect(mismatches.isEmpty, "\(mismatches.count) corpus files mismatched")
        #expect(entries.count == 619)
    }

    /// Files where this library follows libpng, giflib, libwebp or the browsers and Pillow does
    /// not, each with the reason and what is checked instead.
    static let knownDifferences: [String: (reason: String, expectation: Expectation)] = [
        "png/png_decompression_dos.png": ("Pillow refuses a zTXt chunk that inflates past its text limit; libpng drops the oversized ancillary chunk and decodes", .decodesLike(lenient: true)),
        "png/truncated_end_chunk.png": ("every image row is present and only IEND is cut: libpng's rows are complete and browsers show the image; Pillow strict rejects", .decodesLike(lenient: true)),
        "png/unknown_compression_method.png": ("iCCP with an unknown compression method: libpng drops the ancillary chunk and decodes; Pillow cannot open the file", .decodesAtHeaderSize),
        "png/tbbn0g04.png": ("tRNS grey key 15 on 4-bit greyscale: libpng (and browsers) make those pixels transparent; Pillow ignores the key", .sameColoursWithTransparency),
        "apng/chunk_no_fctl.png": ("acTL but no fcTL: no valid animation frame, so the default image shows as in browsers; Pillow errors", .decodesAtHeaderSize),
        "gif/issue_2811.gif": ("LZW minimum code size 11, over the GIF maximum of 8: giflib rejects the stream (Pillow and Chrome accept it; a known giflib limitation)", .fails),
        "gif/test_extents_transparency.gif": ("an unknown block (0x47) follows frame 0: giflib stops there and the frames before it play; Pillow reads on", .fewerFrames),
        "gif/animated_transparent_loop_frames_out_of_bounds.gif": ("frames outside the logical screen are clipped to it (giflib, browsers); Pillow grows the canvas", .logicalScreen),
        "gif/issue_1455_oversized.gif": ("a frame larger than the logical screen is clipped to it (giflib, browsers); Pillow grows the canvas", .logicalScreen),
        "gif/oob.gif": ("a frame outside the logical screen is clipped to it (giflib, browsers); Pillow grows the canvas", .logicalScreen),
        "webp/bad_palette_index.webp": ("out-of-range palette index: libwebp 1.2.4 (Debian 12) gives transparent black, libwebp 1.6.0 (Pillow) opaque black", .referenceExceptTransparentBlack),
    ]

    enum Expectation { case decodesLike(lenient: Bool), decodesAtHeaderSize, sameColoursWithTransparency, fails, fewerFrames, logicalScreen, referenceExceptTransparentBlack }

    private func checkKnownDifference(_ expectation: Expectation, _ entry: [String: Any], _ result: Result<Image, any Error>) -> Bool {
        if case .fails = expectation {
            if case .failure(let error) = result { return error is ImageError }
            return false
        }
        guard case .success(let image) = result else { return false }
        switch expectation {
        case .decodesLike:
            let lenient = entry["lenient"] as? [String: Any]
            return image.bitmap.sha256 == lenient?["frame0_rgba_sha256"] as? String
        case .decodesAtHeaderSize:
            let png = entry["png"] as? [String: Any]
            return image.width == png?["width"] as? Int && image.height == png?["height"] as? Int && !image.isAnimated
        case .sameColoursWithTransparency:
            guard let reference = referenceBitmap(entry) else { return false }
            return image.bitmap.hasTransparency && sameColours(image.bitmap, reference)
        case .fewerFrames:
            return image.frameCount < (entry["frame_count"] as? Int ?? 1) && compareFrame0(image, entry) != .mismatch
        case .logicalScreen:
            guard let gif = entry["gif"] as? [String: Any], image.width == gif["width"] as? Int, image.height == gif["height"] as? Int,
                  let reference = referenceBitmap(entry), let first = (gif["frame_info"] as? [[String: Any]])?.first else { return false }
            return matchesGIFCanvasRule(image.bitmap, reference, first)
        case .referenceExceptTransparentBlack:
            guard let reference = referenceBitmap(entry), reference.width == image.width, reference.height == image.height else { return false }
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let a = image.bitmap[x, y], b = reference[x, y]
                    if a == b { continue }
                    if a == (0, 0, 0, 0) && b == (0, 0, 0, 255) { continue }
                    return false
                }
            }
            return true
        case .fails:
            return false
        }
    }

    private func caveats(_ entry: [String: Any]) -> [String] {
        (entry["caveats"] as? [String] ?? []).map { String($0.prefix { $0 != ":" }) }
    }

    private func check(_ entry: [String: Any]) -> Outcome {
        let path = entry["path"] as! String
        let status = entry["status"] as! String
        let tags = caveats(entry)
        guard let data = try? Corpus.data(path) else { return .mismatched("file missing") }
        // The manifest holds the values as stored (Pillow without colour management).
        let raw = ImageDecodingOptions(appliesOrientation: false, colorSpace: .original)
        let result = Result { try ImageCoders.shared.decode(data, options: raw) }
        if let known = Self.knownDifferences[path] {
            return checkKnownDifference(known.expectation, entry, result) ? .followedBrowserRule(known.reason)
                : .mismatched("expected: \(known.reason); got \(result)")
        }

        if tags.contains("png-critical-crc") {
            // Pillow skips the IDAT CRC; libpng's default rejects the file.
            if case .failure(let error) = result, error is ImageError { return .followedBrowserRule("IDAT CRC mismatch: libpng rejects it (Pillow does not check)") }
            return .mismatched("a bad IDAT CRC must fail as libpng fails")
        }
        if tags.contains("png-ancillary-crc") {
            guard case .success(let image) = result else { return .mismatched("libpng drops a bad ancillary chunk and decodes: \(result)") }
            let lenient = entry["lenient"] as? [String: Any]
            guard image.bitmap.sha256 == lenient?["frame0_rgba_sha256"] as? String else { return .mismatched("differs from the lenient decode") }
            return .followedBrowserRule("bad CRC on an ancillary chunk: libpng warns and decodes (Pillow strict rejects)")
        }
        switch status {
        case "error":
            switch result {
            case .failure(let error) where error is ImageError: return .rejectedAsExpected
            case .failure(let error): return .mismatched("failed with a non-ImageError \(error)")
            case .success: return .mismatched("decoded, but the file is invalid")
            }
        case "partial":
            guard case .success(let image) = result else { return .mismatched("frame 0 is valid and must decode: \(result)") }
            if compareFrame0(image, entry) == .mismatch { return .mismatched("frame 0 RGBA differs") }
            let expectedMax = (entry["frame_count"] as? Int) ?? 1
            guard image.frameCount <= expectedMax else { return .mismatched("more frames than the file holds") }
            return .followedBrowserRule("later APNG frame broken: the animation plays the \(image.frameCount) valid frame(s), as browsers do")
        default:
            guard case .success(let image) = result else { return .mismatched("failed: \(result)") }
            return compareOK(image, entry, data: data)
        }
    }

    private func compareOK(_ image: Image, _ entry: [String: Any], data: Data) -> Outcome {
        let hiddenDefault = entry["apng_hidden_default_image"] as? Bool == true
        guard image.width == entry["width"] as? Int, image.height == entry["height"] as? Int else {
            return .mismatched("size \(image.width)x\(image.height)")
        }
        var frameCount = entry["frame_count"] as? Int ?? 1
        var durations = entry["durations_ms"] as? [Double] ?? []
        if hiddenDefault { frameCount -= 1; durations = Array(durations.dropFirst()) }
        guard image.frameCount == frameCount else { return .mismatched("\(image.frameCount) frames, expected \(frameCount)") }
        if image.isAnimated {
            let loop = entry["loop_count"] as? Int
            guard image.declaredLoopCount == loop else {
                return .mismatched("declared loop count \(String(describing: image.declaredLoopCount)), expected \(String(describing: loop))")
            }
            // No loop block: it plays once.
            guard image.loopCount == (loop ?? 1) else { return .mismatched("loop count \(String(describing: image.loopCount))") }
            let isGIF = entry["container"] as? String == "gif"
            for (index, expected) in durations.enumerated() {
                let want = isGIF && expected < 20 ? 100 : expected
                guard abs(image.frameDurations[index] * 1000 - want) < 0.51 else {
                    return .mismatched("frame \(index) lasts \(image.frameDurations[index] * 1000) ms, expected \(want)")
                }
            }
        }
        let frame0 = compareFrame0(image, entry)
        if frame0 == .mismatch { return .mismatched("frame 0 RGBA differs") }
        if let outcome = compareOrientation(entry, data: data) { return outcome }
        if hiddenDefault { return .followedBrowserRule("APNG default image is not a frame: Pillow shows it as frame 0, players skip it") }
        if case .byRule(let reason) = frame0 { return .followedBrowserRule(reason) }
        return .matched
    }

    enum Frame0: Equatable { case exact, byRule(String), mismatch }

    /// How frame 0 compares: exact (the SHA-256, or the alternative one), within 2 levels of the
    /// reference render for lossy codecs, or by a caveat's rule.
    private func compareFrame0(_ image: Image, _ entry: [String: Any]) -> Frame0 {
        let tags = caveats(entry)
        let ours = image.bitmap
        var expected = [entry["frame0_rgba_sha256"] as? String]
        if entry["apng_hidden_default_image"] as? Bool == true, let frames = entry["frames"] as? [[String: Any]], frames.count > 1 {
            expected.append(frames[1]["rgba_sha256"] as? String)
        }
        if expected.contains(ours.sha256) { return .exact }
        if let alt = entry["alt_rgba_sha256"] as? [String: Any], alt.values.contains(where: { $0 as? String == ours.sha256 }) {
            return .byRule("16-bit samples reduced to their high byte as libpng's strip_16 does (Pillow clips)")
        }
        let container = entry["container"] as? String
        let codecs = (entry["webp"] as? [String: Any])?["codecs"] as? [String] ?? []
        let lossy = container == "jpeg" || (container == "webp" && codecs.contains("VP8"))
        let reference = referenceBitmap(entry)
        if lossy || tags.contains("pillow-cmyk") {
            guard let reference, let diff = ours.maxDifference(to: reference), diff <= 2 else { return .mismatch }
            return tags.contains("pillow-cmyk") ? .byRule("CMYK converted without ICC, within 2 levels of Pillow") : .exact
        }
        if tags.contains("pillow-gif") {
            let info = (entry["gif"] as? [String: Any])?["frame_info"] as? [[String: Any]]
            if let reference, let first = info?.first, matchesGIFCanvasRule(ours, reference, first) {
                return .byRule("transparent start canvas as in browsers (Pillow fills outside the first image)")
            }
            if reference == nil, let transparent = info?.first?["transparent_index"] as? Int,
               pillowTransparentColours(ours, entry, transparent).sha256 == expected[0] {
                return .byRule("transparent pixels carry no colour; equal once given Pillow's palette colour")
            }
        }
        if let reference, ours.maxDifference(to: reference) == 0 {
            return .byRule("equal but for the colour of fully transparent pixels")
        }
        return .mismatch
    }

    /// `bitmap` with every fully transparent pixel given the palette colour of `index`, as
    /// Pillow's P-to-RGBA conversion leaves them.
    private func pillowTransparentColours(_ bitmap: Bitmap, _ entry: [String: Any], _ index: Int) -> Bitmap {
        guard let path = entry["path"] as? String, let data = try? Corpus.data(path), data.count > 13 + index * 3 + 3 else { return bitmap }
        let colour = [data[13 + index * 3], data[14 + index * 3], data[15 + index * 3]]
        var result = bitmap
        result.withUnsafeMutableBytes { bytes in
            var i = 0
            while i < bytes.count {
                if bytes[i + 3] == 0 { bytes[i] = colour[0]; bytes[i + 1] = colour[1]; bytes[i + 2] = colour[2] }
                i += 4
            }
        }
        return result
    }

    /// Browsers start a GIF on a transparent canvas; Pillow fills the area outside the first
    /// image with a palette colour. Inside the first image both must agree. The reference may be
    /// larger (Pillow grows the canvas to fit frames); its top-left part is compared.
    private func matchesGIFCanvasRule(_ ours: Bitmap, _ reference: Bitmap, _ frame: [String: Any]) -> Bool {
        guard ours.width <= reference.width, ours.height <= reference.height,
              let fx = frame["x"] as? Int, let fy = frame["y"] as? Int, let fw = frame["w"] as? Int, let fh = frame["h"] as? Int else { return false }
        for y in 0..<ours.height {
            for x in 0..<ours.width {
                let a = ours[x, y], b = reference[x, y]
                let inside = x >= fx && x < fx + fw && y >= fy && y < fy + fh
                if inside {
                    if a.a != b.a { return false }
                    if a.a != 0 && (a.r != b.r || a.g != b.g || a.b != b.b) { return false }
                } else if a.a != 0 && (a.r != b.r || a.g != b.g || a.b != b.b || a.a != b.a) {
                    return false
                }
            }
        }
        return true
    }

    private func sameColours(_ a: Bitmap, _ b: Bitmap) -> Bool {
        guard a.width == b.width, a.height == b.height else { return false }
        for y in 0..<a.height { for x in 0..<a.width where a[x, y].r != b[x, y].r || a[x, y].g != b[x, y].g || a[x, y].b != b[x, y].b { return false } }
        return true
    }

    private func referenceBitmap(_ entry: [String: Any]) -> Bitmap? {
        guard let path = entry["reference"] as? String, let data = try? Corpus.data(path) else { return nil }
        return try? PNGCoder.decodeStill(data, options: .init())
    }

    /// With orientation applied (the default), EXIF-oriented files match Pillow's exif_transpose.
    private func compareOrientation(_ entry: [String: Any], data: Data) -> Outcome? {
        guard let oriented = entry["frame0_oriented"] as? [String: Any] else { return nil }
        guard entry["orientation_source"] as? String == "exif" else { return nil }  // XMP orientation is not applied (listed by the test below)
        guard let image = try? ImageCoders.shared.decode(data, options: .init(colorSpace: .original)) else {
            return .mismatched("oriented decode failed")
        }
        guard image.width == oriented["width"] as? Int, image.height == oriented["height"] as? Int else {
            return .mismatched("oriented size \(image.width)x\(image.height)")
        }
        if image.bitmap.sha256 == oriented["rgba_sha256"] as? String { return nil }
        // Lossy files: the oriented reference is the raw reference turned; compare by levels.
        guard let reference = referenceBitmap(entry), let orientation = (entry["exif_orientation"] as? Int).flatMap(ExifOrientation.init),
              let diff = image.bitmap.maxDifference(to: reference.oriented(orientation)), diff <= 2 else {
            return .mismatched("oriented frame 0 differs")
        }
        return nil
    }
}

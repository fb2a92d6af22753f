import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageHEIF
@testable import WebImageJXL

/// Every AVIF, HEIC and JPEG XL file of the modern corpus against its manifest (what
/// pillow-avif-plugin, pillow-heif and pillow-jxl-plugin, cross-checked with avifdec,
/// heif-convert and djxl, show): size as displayed, frames, durations, loop count, exact pixels
/// for lossless files and the manifest's tolerance against the reference render for lossy ones.
/// ICC-tagged files are checked on their unconverted values here (the colour issue converts them).
@Suite struct ModernCorpusTests {
    @Test func everyPlugInFileDecodesOrIsRejectedAsTheManifestSays() throws {
        var mismatches: [String] = []
        var counts = (matched: 0, rejected: 0)
        let entries = ModernCorpus.plugInEntries()
        for entry in entries {
            let path = entry["path"] as! String
            if let problem = check(entry) {
                mismatches.append("\(path): \(problem)")
            } else if entry["expect"] as? String == "reject" {
                counts.rejected += 1
            } else {
                counts.matched += 1
            }
        }
        print("modern corpus (AVIF, HEIC, JPEG XL): \(counts.matched) matched, \(mismatches.count) mismatched, \(counts.rejected) rejected as expected")
        for line in mismatches { print("  MISMATCH: \(line)") }
        #expect(mismatches.isEmpty)
        #expect(entries.count == 93)
    }

    /// nil when the file behaves as the manifest says, else what differs.
    private func check(_ entry: [String: Any]) -> String? {
        let path = entry["path"] as! String
        guard let data = try? ModernCorpus.data(path) else { return "unreadable" }
        let result = Result { try ModernCorpus.coders.decode(data, options: .init(preloadAllFrames: true)) }
        if entry["expect"] as? String == "reject" {
            switch result {
            case .success(let image): return "decoded (\(image.width)x\(image.height)) but must be rejected"
            case .failure(let error): return error is ImageError ? nil : "rejected with \(error), not an ImageError"
            }
        }
        let image: Image
        switch result {
        case .success(let decoded): image = decoded
        case .failure(let error): return "rejected: \(error)"
        }
        let formats = [entry["format"] as! String] + (entry["format_alt"] as? [String] ?? [])
        guard formats.contains(image.format.rawValue) else { return "format \(image.format)" }
        guard image.width == entry["width"] as? Int, image.height == entry["height"] as? Int else {
            return "size \(image.width)x\(image.height), expected \(entry["width"]!)x\(entry["height"]!)"
        }
        let frameCount = entry["frame_count"] as! Int
        guard image.frameCount == frameCount else { return "\(image.frameCount) frames, expected \(frameCount)" }
        if frameCount > 1 {
            let expected = entry["durations_ms"] as! [Double]
            let seen = image.frameDurations.map { $0 * 1000 }
            guard zip(seen, expected).allSatisfy({ abs($0 - $1) <= 0.5 }) else { return "durations \(seen), expected \(expected)" }
            let loops = [entry["loop_count"] as? Int].compactMap { $0 } + (entry["loop_count_alt"] as? [Int] ?? [])
            guard loops.contains(image.loopCount ?? -1) else { return "loop count \(image.loopCount ?? -1), expected one of \(loops)" }
        }
        guard let frames = try? image.allFrames() else { return "a frame did not decode" }
        if let colour = entry["colour"] as? [String: Any] {
            // Converted to sRGB (the default): the sRGB rendering, and no profile left.
            guard image.colorInfo.iccProfile == nil else { return "the profile is still on the converted image" }
            return compare(frames[0].bitmap, reference: colour["srgb_reference"] as? String, tolerance: colour["tolerance"])
        }
        if entry["lossless"] as? Bool == true {
            let accepted = entry["frames_rgba_sha256"] as! [[String]]
            for (index, frame) in frames.enumerated() where !accepted[index].contains(frame.bitmap.sha256) {
                return "frame \(index) pixels differ"
            }
            return nil
        }
        return compare(frames[0].bitmap, reference: entry["reference"] as? String, tolerance: entry["tolerance"])
    }

    private func compare(_ bitmap: Bitmap, reference: String?, tolerance: Any?) -> String? {
        guard let reference, let tolerance = tolerance as? [String: Any],
              let data = try? ModernCorpus.data(reference), let expected = try? Image(data: data).bitmap else {
            return "no reference to compare with"
        }
        guard let distance = PixelDistance(bitmap, expected) else { return "reference size differs" }
        let mean = (tolerance["mean_abs"] as? Double) ?? 2, worst = (tolerance["max_abs"] as? Int) ?? 48
        guard distance.meanAbs <= mean, distance.maxAbs <= worst else {
            return "mean |diff| \(distance.meanAbs) (<= \(mean)), max \(distance.maxAbs) (<= \(worst))"
        }
        return nil
    }

    @Test func aDeclared65535SquareIsTooLargeBeforeAnyPixelExists() throws {
        for path in ["avif/bad_declared_65535x65535.avif", "heic/bad_declared_65535x65535.heic", "jxl/bad_declared_65535x65535.jxl"] {
            let data = try ModernCorpus.data(path)
            do {
                _ = try ModernCorpus.coders.decode(data)
                Issue.record("\(path) decoded")
            } catch let error as ImageError {
                // libavif's own parser refuses the lying ispe before our check sees a size.
                if case .tooLarge = error { continue }
                if path.hasSuffix(".avif"), case .undecodable = error { continue }
                Issue.record("\(path): \(error)")
            }
        }
    }

    @Test func aPixelLimitUnderTheImageIsRefusedFromTheHeader() throws {
        for path in ["avif/lossless_8bit_444_rgb.avif", "heic/8bit_444_q90.heic", "jxl/lossless_8bit_rgb.jxl", "avif/grid_2x2_lossless.avif"] {
            let data = try ModernCorpus.data(path)
            #expect(throws: ImageError.self, "\(path)") {
                _ = try ModernCorpus.coders.decode(data, options: .init(pixelLimit: 1000))
            }
        }
    }

    /// Every prefix of one file per format (every byte for small files) gives a typed error,
    /// never a crash or an image made of missing bytes.
    @Test func truncationAtAnyOffsetIsATypedError() throws {
        for path in ["avif/lossy_8bit_420_alpha.avif", "avif/sequence_lossy_6frames.avif", "heic/8bit_alpha_q80.heic",
                     "jxl/lossy_d2_alpha.jxl", "jxl/animated_from_gif.jxl", "jxl/lossless_container.jxl"] {
            let data = try ModernCorpus.data(path)
            let step = max(1, data.count / 300)
            for length in stride(from: 0, to: data.count, by: step) {
                let prefix = data.prefix(length)
                do {
                    let image = try ModernCorpus.coders.decode(prefix, options: .init(preloadAllFrames: true))
                    Issue.record("\(path) cut at \(length) of \(data.count) bytes decoded (\(image.width)x\(image.height))")
                } catch is ImageError {
                } catch {
                    Issue.record("\(path) cut at \(length): \(error)")
                }
            }
        }
    }

    @Test func sniffingDecidesByTheCompatibleBrands() throws {
        func ftyp(_ major: String, _ compatible: [String]) -> Data {
            let brands = ([major, "\0\0\0\0"] + compatible).joined()
            let size = 8 + brands.utf8.count
            return Data([0, 0, 0, UInt8(size)]) + Data("ftyp".utf8) + Data(brands.utf8) + Data(count: 16)
        }
        #expect(ImageFormat(sniffing: ftyp("avif", ["mif1", "miaf"])) == .avif)
        #expect(ImageFormat(sniffing: ftyp("mif1", ["miaf", "avif"])) == .avif)
        #expect(ImageFormat(sniffing: ftyp("msf1", ["avis"])) == .avif)
        #expect(ImageFormat(sniffing: ftyp("mif1", ["heic"])) == .heic)
        #expect(ImageFormat(sniffing: ftyp("heix", ["mif1"])) == .heic)
        #expect(ImageFormat(sniffing: ftyp("mif1", ["miaf"])) == .heif)
        #expect(ImageFormat(sniffing: ftyp("isom", ["mp41", "mp42"])) == .unknown)
        #expect(ImageFormat(sniffing: Data([0xFF, 0x0A, 0xFA])) == .jxl)
        #expect(ImageFormat(sniffing: Data([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A, 0, 0])) == .jxl)
        for entry in ModernCorpus.plugInEntries() where entry["expect"] as? String == "decode" {
            let data = try ModernCorpus.data(entry["path"] as! String)
            let format = ImageFormat(sniffing: data).rawValue
            #expect(format == entry["format"] as? String || (entry["format_alt"] as? [String] ?? []).contains(format))
        }
    }

    @Test func colourInformationIsKeptOnTheImage() throws {
        let avif = try ModernCorpus.coders.decode(try ModernCorpus.data("avif/lossy_10bit_420.avif"))
        #expect(avif.colorInfo.cicp != nil)
        let p3 = try ModernCorpus.coders.decode(try ModernCorpus.data("heic/icc_displayp3.heic"), options: .init(colorSpace: .original))
        #expect((p3.colorInfo.iccProfile?.count ?? 0) > 100)
        let jxl = try ModernCorpus.coders.decode(try ModernCorpus.data("jxl/lossless_8bit_rgb.jxl"))
        #expect(jxl.colorInfo.cicp?.transferCharacteristics == 13)
    }

    /// libjxl describes a grey encoding without primaries and leaves that field of the caller's
    /// struct as it was: a grey JPEG XL has its profile and no code points, decoded whole or
    /// streamed (a CI run once saw the field's stale stack bytes taken as primaries).
    @Test func aGreyJPEGXLHasNoCodePoints() throws {
        for name in ["jxl/lossless_8bit_grey.jxl", "jxl/jpeg_recompressed_grey.jxl"] {
            let data = try ModernCorpus.data(name)
            for _ in 0..<20 {
                let image = try ModernCorpus.coders.decode(data, options: .init(colorSpace: .original))
                #expect(image.colorInfo.cicp == nil && image.colorInfo.iccProfile != nil, "\(name)")
            }
            let decoder = try #require(JXLCoder().makeIncrementalDecoder(options: .init(colorSpace: .original)))
            for start in stride(from: 0, to: data.count, by: 97) { try decoder.append(data[start..<min(data.count, start + 97)]) }
            let streamed = try decoder.finish()
            #expect(streamed.colorInfo.cicp == nil && streamed.colorInfo.iccProfile != nil, "\(name)")
        }
    }
}

/// Decode at size through the plug-ins: the full decode and the area resampler in one call, the
/// thumbnail the same as the full decode resized (the orientation turned first).
@Suite struct PlugInDecodeAtSizeTests {
    @Test func aThumbnailIsTheFullDecodeResized() throws {
        for path in ["jxl/progressive_lossy.jxl", "jxl/lossless_8bit_rgba.jxl", "jxl/orientation6_lossless.jxl",
                     "avif/transform_irot1_imir0.avif", "avif/lossy_8bit_420_alpha.avif", "heic/transform_irot1.heic"] {
            let data = try ModernCorpus.data(path)
            let full = try ModernCorpus.coders.decode(data)
            let thumbnail = try ModernCorpus.coders.decode(data, options: .init(maxPixelSize: 8))
            #expect(max(thumbnail.width, thumbnail.height) == 8, "\(path)")
            let reference = full.bitmap.areaDownscaled(toWidth: thumbnail.width, height: thumbnail.height)
            let distance = try #require(PixelDistance(thumbnail.bitmap, reference), "\(path)")
            // Resized before it is turned (AVIF): the area sums round once differently, by 1 at most.
            #expect(distance.maxAbs <= 1, "\(path): mean |diff| \(distance.meanAbs)")
        }
    }
}

/// JPEG XL as its bytes arrive: passes as previews, each byte decoded once (only what libjxl has
/// not consumed is kept), the final image from the decoder's state equal to a whole-file decode.
@Suite struct JXLIncrementalTests {
    func stream(_ data: Data, chunk: Int) throws -> (previews: Int, kept: Int, image: Image) {
        let decoder = try #require(JXLCoder().makeIncrementalDecoder(options: .init()) as? JXLIncrementalDecoder)
        var previews = 0, kept = 0, offset = 0
        while offset < data.count {
            let end = min(data.count, offset + chunk)
            try decoder.append(data[offset..<end])
            if let preview = try decoder.preview() {
                previews += 1
                #expect(preview.image.width > 0)
            }
            kept = max(kept, decoder.keptByteCount)
            offset = end
        }
        return (previews, kept, try decoder.finish())
    }

    @Test func aProgressiveStillShowsPassesAndKeepsLittle() throws {
        // A 12 MP-class progressive file is made here: the corpus's are 96x64.
        let big = Image(bitmap: Fixtures.gradient(width: 1024, height: 768, opaque: true))
        for data in [try ModernCorpus.data("jxl/progressive_lossy.jxl"), try JXLCoder().encode(big, as: .jxl, options: .init(quality: 0.9))] {
            let whole = try JXLCoder().decode(data, options: .init())
            let streamed = try stream(data, chunk: max(64, data.count / 40))
            #expect(streamed.image.bitmap == whole.bitmap, "the final image is the whole-file decode")
            #expect(streamed.kept < data.count, "kept \(streamed.kept) of \(data.count) bytes")
            print("JPEG XL streamed: \(data.count) bytes, \(streamed.previews) previews, at most \(streamed.kept) bytes kept")
            // The 96x64 corpus file is one group: its passes end with its last bytes. The
            // 1024x768 one shows its DC pass (1:8) before the rest arrives.
            if data.count > 4096 { #expect(streamed.previews >= 1, "a preview before the end") }
        }
    }

    @Test func everyStillAndAnimationOfTheCorpusStreamsToTheWholeFileDecode() throws {
        for entry in ModernCorpus.plugInEntries() where entry["folder"] as? String == "jxl" {
            let path = entry["path"] as! String
            let data = try ModernCorpus.data(path)
            let whole = Result { try JXLCoder().decode(data, options: .init(preloadAllFrames: true)) }
            let streamed = Result { try stream(data, chunk: 97).image }
            switch (whole, streamed) {
            case (.success(let a), .success(let b)):
                #expect(a.bitmap == b.bitmap && a.frameCount == b.frameCount, "\(path)")
            case (.failure, .failure): break
            default: Issue.record("\(path): whole \(whole), streamed \(streamed)")
            }
        }
    }

    /// A file read at once reaches the decoder as one piece: libjxl then reads its header and
    /// its whole first frame in one call.
    @Test func aFileInOnePieceStreamsToTheWholeFileDecode() throws {
        var decoded = 0
        for entry in ModernCorpus.plugInEntries() where entry["folder"] as? String == "jxl" {
            let path = entry["path"] as! String
            let data = try ModernCorpus.data(path)
            guard let whole = try? JXLCoder().decode(data, options: .init(preloadAllFrames: true)) else { continue }
            let streamed = try stream(data, chunk: data.count).image
            #expect(whole.bitmap == streamed.bitmap && whole.frameCount == streamed.frameCount, "\(path)")
            #expect(whole.colorInfo == streamed.colorInfo, "\(path)")
            decoded += 1
        }
        #expect(decoded > 15)
    }

    @Test func aCutStreamIsATypedError() throws {
        let data = try ModernCorpus.data("jxl/progressive_lossy.jxl")
        let decoder = try #require(JXLCoder().makeIncrementalDecoder(options: .init()))
        try decoder.append(data.prefix(data.count / 2))
        #expect(throws: ImageError.self) { _ = try decoder.finish() }
    }
}

/// HEIF files whose primary item is missing, or whose container lies, are typed errors.
@Suite struct HEIFBadInputTests {
    @Test func aPrimaryItemThatIsNotThereIsRefused() throws {
        var data = try ModernCorpus.data("heic/8bit_444_q90.heic")
        let pitm = try #require(data.range(of: Data("pitm".utf8)))
        // pitm: FullBox header (4 bytes), then the 16-bit item ID: point it at an item that does not exist.
        let id = pitm.upperBound + 4
        data[id] = 0x7F
        data[id + 1] = 0x7F
        #expect(throws: ImageError.self) { _ = try HEIFCoder().decode(data, options: .init()) }
    }
}

/// Every decoder keeps the colour profile its file embeds (PNG iCCP, JPEG's chained APP2
/// segments, WebP ICCP, AVIF/HEIF colr, JPEG XL): the bytes as the manifest has them, their
/// description, through whole-file and incremental decoding; the values are left as stored.
@Suite struct ColorProfileReadingTests {
    @Test func theICCSectionsProfilesAreKeptAndDescribed() throws {
        let entries = ModernCorpus.entries().filter { $0["folder"] as? String == "icc" }
        #expect(entries.count == 8)
        for entry in entries {
            let path = entry["path"] as! String
            let colour = try #require(entry["colour"] as? [String: Any])
            let data = try ModernCorpus.data(path)
            let whole = try ModernCorpus.coders.decode(data, options: .init(colorSpace: .original))
            let profile = try #require(whole.colorInfo.iccProfile, "\(path): no profile")
            #expect(profile.count == colour["icc_bytes"] as? Int, "\(path)")
            #expect(Digest.sha256(profile) == colour["icc_sha256"] as? String, "\(path)")
            #expect(whole.colorInfo.profileDescription == colour["icc_description"] as? String, "\(path)")
            // The values as stored (the colour stage converts them).
            #expect(whole.bitmap.sha256 == colour["raw_rgba_sha256"] as? String || entry["lossless"] as? Bool != true, "\(path)")
            // The same through the incremental decoder, in small pieces.
            let decoder = try #require(ModernCorpus.coders.makeIncrementalDecoder(for: data.prefix(64), options: .init(colorSpace: .original)))
            var offset = 0
            while offset < data.count {
                try decoder.append(data[offset..<min(data.count, offset + 509)])
                offset += 509
            }
            #expect(try decoder.finish().colorInfo.iccProfile == profile, "\(path) streamed")
        }
    }

    @Test func aJPEGProfileWithAMissingPieceIsNotKept() throws {
        var data = try ModernCorpus.data("icc/jpeg_cmyk.jpg")   // 79,352 bytes of profile: two APP2 pieces
        let tag = Data("ICC_PROFILE\0".utf8)
        let first = try #require(data.range(of: tag))
        #expect(data[first.upperBound + 1] == 2, "the profile is in two pieces")
        // Renumber the first piece as the second: piece 1 is missing.
        data[first.upperBound] = 2
        #expect(try ModernCorpus.coders.decode(data, options: .init(colorSpace: .original)).colorInfo.iccProfile == nil)
    }

    @Test func theModernFormatsDescribeTheirProfilesToo() throws {
        for path in ["avif/icc_displayp3_lossless.avif", "heic/icc_displayp3.heic", "jxl/icc_displayp3_lossless.jxl"] {
            let image = try ModernCorpus.coders.decode(try ModernCorpus.data(path), options: .init(colorSpace: .original))
            #expect(image.colorInfo.profileDescription?.hasPrefix("Display P3") == true, "\(path): \(image.colorInfo.profileDescription ?? "none")")
        }
    }
}

/// An AVIF sequence whose container lies about its frames' size (the track header or the
/// sample entry says 32x32, the frames are 64x64) is a typed error, never frames of another
/// size than the image's (an encoder sizes its canvas from the image).
@Suite struct AVIFLyingSequenceTests {
    /// The corpus's 4-frame sequence with `patch` applied to a copy.
    func patched(_ patch: (inout Data) throws -> Void) throws -> Data {
        var data = try ModernCorpus.data("avif/sequence_lossless_4frames.avif")
        try patch(&data)
        return data
    }

    @Test func aTrackHeaderOrSampleEntryOfAnotherSizeIsRefused() throws {
        let tkhd = try patched { data in
            let box = try #require(data.range(of: Data("tkhd".utf8))).lowerBound
            #expect(data[box + 4] == 1, "a version 1 tkhd")
            // Version 1: times are 64-bit; width and height (16.16) follow the matrix.
            let width = box + 4 + 4 + 8 + 8 + 4 + 4 + 8 + 8 + 2 + 2 + 2 + 2 + 36
            #expect(data[width..<(width + 2)] == Data([0, 64]))
            data.replaceSubrange(width..<(width + 8), with: [0, 32, 0, 0, 0, 32, 0, 0])
        }
        let entry = try patched { data in
            let stsd = try #require(data.range(of: Data("stsd".utf8))).upperBound
            let av01 = try #require(data.range(of: Data("av01".utf8), in: stsd..<data.count)).lowerBound
            let width = av01 + 4 + 6 + 2 + 2 + 2 + 12
            #expect(data[width..<(width + 4)] == Data([0, 64, 0, 64]))
            data.replaceSubrange(width..<(width + 4), with: [0, 32, 0, 32])
        }
        for data in [tkhd, entry] {
            do {
                let image = try AVIFCoder().decode(data, options: .init(preloadAllFrames: true))
                for index in 0..<image.frameCount {
                    let frame = try image.frame(at: index).bitmap
                    #expect(frame.width == image.width && frame.height == image.height, "frame \(index) of another size")
                }
            } catch is ImageError {
            }
        }
    }
}

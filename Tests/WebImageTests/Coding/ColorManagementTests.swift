import Foundation
import Testing
@testable import WebImage

/// Colour management on lcms2 (`ImageDecodingOptions.colorSpace`), against the ICC section of
/// the modern corpus: the sRGB rendering lcms2 gives through Pillow's ImageCms, and the raw
/// values of `.original`.
@Suite struct ColorManagementTests {
    static var iccEntries: [[String: Any]] { ModernCorpus.entries().filter { $0["folder"] as? String == "icc" } }

    func reference(_ path: String) throws -> Bitmap {
        try ImageCoders.shared.decode(try ModernCorpus.data(path), options: .init(colorSpace: .original)).bitmap
    }

    @Test func theICCSectionConvertsToTheSRGBRenderingWithinOneLevelOnAverage() throws {
        #expect(Self.iccEntries.count == 8)
        for entry in Self.iccEntries {
            let path = entry["path"] as! String
            let colour = try #require(entry["colour"] as? [String: Any])
            let image = try ImageCoders.shared.decode(try ModernCorpus.data(path))
            #expect(image.colorInfo.iccProfile == nil, "\(path): the converted image keeps no profile")
            let expected = try reference(colour["srgb_reference"] as! String)
            let distance = try #require(PixelDistance(image.bitmap, expected), "\(path): size")
            #expect(distance.meanAbs <= 1 && distance.maxAbs <= 3, "\(path): mean \(distance.meanAbs), max \(distance.maxAbs)")
            // The raw values are far from it: the conversion did something.
            let raw = try #require(PixelDistance(try reference(colour["raw_reference"] as! String), expected))
            #expect(raw.maxAbs > 10, "\(path)")
        }
    }

    @Test func originalKeepsTheStoredValuesAndTheProfile() throws {
        for entry in Self.iccEntries {
            let path = entry["path"] as! String
            let colour = try #require(entry["colour"] as? [String: Any])
            let image = try ImageCoders.shared.decode(try ModernCorpus.data(path), options: .init(colorSpace: .original))
            #expect(image.colorInfo.iccProfile.map(Digest.sha256) == colour["icc_sha256"] as? String, "\(path)")
            if entry["lossless_raw"] as? Bool == true {
                #expect(image.bitmap.sha256 == colour["raw_rgba_sha256"] as? String, "\(path)")
            } else {
                let raw = try #require(PixelDistance(image.bitmap, try reference(colour["raw_reference"] as! String)))
                #expect(raw.meanAbs <= 1 && raw.maxAbs <= 3, "\(path): mean \(raw.meanAbs), max \(raw.maxAbs)")
            }
        }
    }

    /// Streamed in small pieces, every file ends as the whole-file decode does (a CMYK JPEG,
    /// whose inks the stream does not keep, is decoded whole at the end).
    @Test func theIncrementalDecodersConvertTheSameWay() throws {
        for entry in Self.iccEntries {
            let path = entry["path"] as! String
            let data = try ModernCorpus.data(path)
            let decoder = try #require(ImageCoders.shared.makeIncrementalDecoder(for: data.prefix(64)))
            var offset = 0
            while offset < data.count {
                try decoder.append(data[offset..<min(data.count, offset + 509)])
                _ = try decoder.preview()
                offset += 509
            }
            #expect(try decoder.finish().bitmap == (try ImageCoders.shared.decode(data)).bitmap, "\(path)")
        }
    }

    @Test func aThumbnailIsConvertedToo() throws {
        let data = try ModernCorpus.data("icc/jpeg_displayp3.jpg")
        let small = try ImageCoders.shared.decode(data, options: .init(maxPixelSize: 16))
        let raw = try ImageCoders.shared.decode(data, options: .init(maxPixelSize: 16, colorSpace: .original))
        #expect(small.width == 16 && small.colorInfo.iccProfile == nil && raw.colorInfo.iccProfile != nil)
        #expect(try #require(PixelDistance(small.bitmap, raw.bitmap)).maxAbs > 10)
    }

    /// A profile lcms2 cannot read leaves the pixels as stored, with the bytes kept: browsers
    /// show such an image unmanaged, and a decode must not fail for it.
    @Test func anUnreadableProfileLeavesThePixelsAsStored() throws {
        var data = try ModernCorpus.data("icc/png_displayp3.png")
        let plain = try ImageCoders.shared.decode(data, options: .init(colorSpace: .original))
        // Break the profile's signature ('acsp' at offset 36) inside the compressed iCCP chunk:
        // rebuild the chunk with a damaged profile instead.
        let profile = try #require(plain.colorInfo.iccProfile)
        var broken = profile
        broken[36] = 0x58
        data = try PNGTestChunks.replacingICCP(in: data, with: broken)
        let image = try ImageCoders.shared.decode(data)
        #expect(image.bitmap == plain.bitmap)
        #expect(image.colorInfo.iccProfile == broken)
    }

    /// An image with sRGB's own profile is not converted (lcms2's transform would only cost time
    /// and round-trip rounding), and one without a profile is left alone.
    @Test func anSRGBProfileOrNoneIsLeftAlone() throws {
        let srgb = try #require(ColorTestProfiles.srgb)
        let pixels = Image(bitmap: Fixtures.gradient(width: 40, height: 30))
        let tagged = try PNGTestChunks.replacingICCP(in: try pixels.encoded(as: .png), with: srgb)
        let decoded = try ImageCoders.shared.decode(tagged)
        #expect(decoded.bitmap == pixels.bitmap)
        #expect(ColorTransform.toSRGB(ImageColorInfo(iccProfile: srgb)) == nil)
        #expect(ColorTransform.toSRGB(ImageColorInfo(cicp: .init(colorPrimaries: 1, transferCharacteristics: 13,
                                                                    matrixCoefficients: 6, fullRange: true))) == nil)
    }

    /// A PNG's cICP chunk (PNG's third edition) is read and converted like the same colour
    /// space's profile, and takes precedence over an iCCP chunk.
    @Test func aPNGsCICPChunkIsConvertedFrom() throws {
        let p3 = try ModernCorpus.data("icc/png_displayp3.png")
        let byProfile = try ImageCoders.shared.decode(p3)
        let tagged = try PNGTestChunks.replacing("cICP", in: p3, with: Data([12, 13, 0, 1]))
        let original = try ImageCoders.shared.decode(tagged, options: .init(colorSpace: .original))
        #expect(original.colorInfo.cicp == .init(colorPrimaries: 12, transferCharacteristics: 13, matrixCoefficients: 0, fullRange: true))
        let byCodePoints = try ImageCoders.shared.decode(tagged)
        #expect(try #require(PixelDistance(byCodePoints.bitmap, byProfile.bitmap)).maxAbs <= 2)
        #expect(byCodePoints.bitmap != original.bitmap)
    }

    /// CICP code points without a profile (AVIF's and HEIF's `nclx`): P3 and BT.2020 primaries
    /// with an SDR transfer are converted; PQ and HLG (HDR) are left as stored.
    @Test func codePointsWithoutAProfileAreConvertedWhenSDR() throws {
        func cicp(_ primaries: Int, _ transfer: Int) -> ImageColorInfo {
            ImageColorInfo(cicp: .init(colorPrimaries: primaries, transferCharacteristics: transfer, matrixCoefficients: 1, fullRange: true))
        }
        let p3 = try #require(ColorTransform.toSRGB(cicp(12, 13)))
        var red = Bitmap(width: 1, height: 1, rgba: [255, 0, 0, 255])
        p3.apply(to: &red)
        // P3's red is outside sRGB: clipped to full red, with no green or blue.
        #expect(red[0, 0] == (255, 0, 0, 255))
        var mid = Bitmap(width: 1, height: 1, rgba: [128, 64, 32, 200])
        p3.apply(to: &mid)
        #expect(mid[0, 0].r > 128 && mid[0, 0].g < 64 && mid[0, 0].a == 200, "\(mid[0, 0])")
        #expect(ColorTransform.toSRGB(cicp(9, 1)) != nil)
        #expect(ColorTransform.toSRGB(cicp(9, 16)) == nil)
        #expect(ColorTransform.toSRGB(cicp(9, 18)) == nil)
    }
}

/// What keeps a profile after decoding with `.original`: encoders embed it (PNG iCCP, JPEG
/// APP2, WebP ICCP), transformers and thumbnails keep it, and the manager caches such images
/// apart from the converted ones.
@Suite struct ColorProfileKeepingTests {
    static let p3PNG = "icc/png_displayp3.png"

    @Test func encodersEmbedTheProfileSoTheColoursSurviveARoundTrip() throws {
        let data = try ModernCorpus.data(Self.p3PNG)
        let original = try ImageCoders.shared.decode(data, options: .init(colorSpace: .original))
        let converted = try ImageCoders.shared.decode(data)
        for (format, options) in [(ImageFormat.png, ImageEncodingOptions()), (.webp, .init(lossless: true)), (.jpeg, .init(quality: 1))] {
            let encoded = try ImageCoders.shared.encode(original, as: format, options: options)
            let kept = try ImageCoders.shared.decode(encoded, options: .init(colorSpace: .original))
            #expect(kept.colorInfo.iccProfile == original.colorInfo.iccProfile, "\(format)")
            // Decoded again with the default, it shows the colours the first file showed.
            let shown = try ImageCoders.shared.decode(encoded)
            let distance = try #require(PixelDistance(shown.bitmap, converted.bitmap))
            if format == .jpeg {
                // Lossy (4:2:0 on saturated colours): nearer to the managed colours than its raw values are.
                let unmanaged = try #require(PixelDistance(kept.bitmap, converted.bitmap))
                #expect(distance.meanAbs < unmanaged.meanAbs - 1, "jpeg: mean \(distance.meanAbs) vs \(unmanaged.meanAbs) unmanaged")
            } else {
                #expect(distance.meanAbs <= 0.01, "\(format): mean \(distance.meanAbs)")
            }
        }
        // A converted image embeds nothing: its pixels are sRGB.
        let plain = try ImageCoders.shared.encode(converted, as: .png)
        #expect(try ImageCoders.shared.decode(plain, options: .init(colorSpace: .original)).colorInfo.iccProfile == nil)
    }

    /// A CMYK or grey profile does not describe RGBA pixels: it is never embedded in an RGB file.
    @Test func aProfileOfAnotherColourSpaceIsNotEmbedded() throws {
        for path in ["icc/jpeg_cmyk.jpg", "icc/png_grey_gamma18.png"] {
            let original = try ImageCoders.shared.decode(try ModernCorpus.data(path), options: .init(colorSpace: .original))
            #expect(original.colorInfo.iccProfile != nil)
            for format in [ImageFormat.png, .jpeg, .webp] {
                let encoded = try ImageCoders.shared.encode(original, as: format)
                #expect(try ImageCoders.shared.decode(encoded, options: .init(colorSpace: .original)).colorInfo.iccProfile == nil,
                        "\(path) as \(format)")
            }
        }
    }

    @Test func transformersKeepTheProfile() throws {
        let original = try ImageCoders.shared.decode(try ModernCorpus.data(Self.p3PNG), options: .init(colorSpace: .original))
        let transformers: [any ImageTransformer] = [ResizingTransformer(width: 20, height: 20, scaleMode: .fill),
                                                    FlippingTransformer(horizontal: true, vertical: false),
                                                    RotationTransformer(angle: 90)]
        for transformer in transformers {
            #expect(try transformer.transform(original).colorInfo == original.colorInfo, "\(transformer.key)")
        }
    }

    @Test func theManagerCachesOriginalAndConvertedApart() async throws {
        let h = try await ManagerHarness()
        h.server.route("/p3.png", .respond(body: try ModernCorpus.data(Self.p3PNG)))
        let url = h.url("/p3.png")
        var keep = ImageContext()
        keep.colorSpace = .original
        let converted = try await h.manager.image(for: url)
        let original = try await h.manager.result(for: url, context: keep)
        #expect(converted.colorInfo.iccProfile == nil && original.image.colorInfo.iccProfile != nil)
        #expect(converted.bitmap != original.image.bitmap)
        #expect(h.manager.cacheKey(for: url, context: keep) != h.manager.cacheKey(for: url))
        // Each is a memory hit of its own kind afterwards, and a thumbnail keeps the profile.
        let again = try await h.manager.result(for: url, context: keep)
        #expect(again.cacheType == .memory && again.image.colorInfo.iccProfile != nil)
        #expect(try await h.manager.result(for: url).image.bitmap == converted.bitmap)
        keep.thumbnailPixelSize = PixelSize(width: 16, height: 16)
        #expect(try await h.manager.image(for: url, context: keep).colorInfo.iccProfile != nil)
        await h.finish()
    }
}

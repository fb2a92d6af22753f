import CWebImageCodecs
import Foundation
import Testing
@testable import WebImage

/// The matrix-shaper path of colour conversion (wi_color_shaper.c) against lcms2's own
/// transform of the same profile, on every one of the 2^24 8-bit RGB inputs.
@Suite struct MatrixShaperTests {
    /// The profile's transform: ours (`flags` 0) or lcms2's evaluator (`WI_COLOR_LCMS_ONLY`).
    final class Transform {
        let pointer: OpaquePointer?
        let status: Int32
        init(_ profile: Data, flags: Int32) {
            var made: OpaquePointer?
            var input: Int32 = 0
            status = profile.withUnsafeBytes {
                wi_color_transform_from_icc($0.bindMemory(to: UInt8.self).baseAddress, $0.count, flags, &made, &input)
            }
            pointer = made
        }
        deinit { wi_color_transform_free(pointer) }

        /// Whether the matrix-shaper tables convert (not lcms2's evaluator, not the identity).
        var isShaper: Bool { wi_color_transform_is_shaper(pointer) != 0 }

        func apply(_ pixels: inout [UInt8]) {
            guard let pointer else { return }
            pixels.withUnsafeMutableBufferPointer { wi_color_transform_apply(pointer, $0.baseAddress, $0.count / 4) }
        }
    }

    /// Every 8-bit RGB triple once, with an alpha that varies (it must come out unchanged).
    static let everyInput: [UInt8] = {
        var pixels = [UInt8](repeating: 0, count: 4 << 24)
        pixels.withUnsafeMutableBufferPointer { buffer in
            for index in 0..<(1 << 24) {
                buffer[index * 4] = UInt8(truncatingIfNeeded: index >> 16)
                buffer[index * 4 + 1] = UInt8(truncatingIfNeeded: index >> 8)
                buffer[index * 4 + 2] = UInt8(truncatingIfNeeded: index)
                buffer[index * 4 + 3] = UInt8(truncatingIfNeeded: index &* 7)
            }
        }
        return pixels
    }()

    /// The largest difference between two buffers, and how many bytes differ at all.
    static func compare(_ a: [UInt8], _ b: [UInt8]) -> (largest: Int, differing: Int) {
        var largest = 0, differing = 0
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for index in 0..<a.count where a[index] != b[index] {
                    differing += 1
                    largest = max(largest, abs(Int(a[index]) - Int(b[index])))
                }
            }
        }
        return (largest, differing)
    }

    /// The profiles of the issue: the modern corpus's Display P3 and Adobe RGB (as the files
    /// carry them) and ProPhoto (D50, gamma 1.8) built by lcms2.
    static func profiles() throws -> [(String, Data)] {
        let p3 = try #require(ImageMetadata(reading: try ModernCorpus.data("icc/png_displayp3.png")).iccProfile)
        let adobe = try #require(ImageMetadata(reading: try ModernCorpus.data("icc/jpeg_adobergb.jpg")).iccProfile)
        return [("Display P3", p3), ("Adobe RGB", adobe), ("ProPhoto", try #require(ColorTestProfiles.proPhoto))]
    }

    /// Where the tag `signature`'s data starts in an ICC profile (its tag table follows the
    /// 128-byte header).
    static func tagOffset(_ signature: String, in profile: Data) -> Int? {
        let bytes = [UInt8](profile)
        func word(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        guard bytes.count >= 132 else { return nil }
        for entry in 0..<word(128) where 132 + entry * 12 + 12 <= bytes.count {
            let at = 132 + entry * 12
            if bytes[at..<(at + 4)].elementsEqual(signature.utf8) { return word(at + 4) }
        }
        return nil
    }

    @Test(arguments: 0..<3) func everyInputIsWithinOneOfLCMS2(_ which: Int) throws {
        let (name, profile) = try Self.profiles()[which]
        let ours = Transform(profile, flags: 0), reference = Transform(profile, flags: Int32(WI_COLOR_LCMS_ONLY))
        #expect(ours.status == WI_OK && reference.status == WI_OK, "\(name)")
        #expect(ours.isShaper, "\(name): the matrix-shaper path converts")
        #expect(!reference.isShaper)
        var fast = Self.everyInput, exact = Self.everyInput
        ours.apply(&fast)
        reference.apply(&exact)
        let difference = Self.compare(fast, exact)
        #expect(difference.largest <= 1, "\(name): \(difference.largest)")
        // The conversion did something, and left alpha alone.
        #expect(Self.compare(fast, Self.everyInput).differing > 1 << 20, "\(name)")
        #expect(stride(from: 3, to: fast.count, by: 4 * 4099).allSatisfy { fast[$0] == Self.everyInput[$0] }, "\(name): alpha")
    }

    /// sRGB itself is not converted at all: every input stays as it is, within 1 of what
    /// lcms2's sRGB-to-sRGB transform gives.
    @Test func sRGBIsLeftAsItIsWithinOneOfLCMS2() throws {
        let profile = try #require(ColorTestProfiles.srgb)
        #expect(Transform(profile, flags: 0).status == WI_COLOR_IDENTITY)
        let reference = Transform(profile, flags: Int32(WI_COLOR_LCMS_ONLY))
        #expect(reference.status == WI_OK)
        var exact = Self.everyInput
        reference.apply(&exact)
        #expect(Self.compare(exact, Self.everyInput).largest <= 1)
    }

    /// A profile lcms2 would read through a LUT is left to lcms2 (the corpus's CMYK and grey
    /// ones too), and so is a matrix whose sums would need an output table beyond the path's.
    @Test func profilesOutsideThePathGoToLCMS2() throws {
        let grey = try #require(ImageMetadata(reading: try ModernCorpus.data("icc/png_grey_gamma18.png")).iccProfile)
        let cmyk = try #require(ImageMetadata(reading: try ModernCorpus.data("icc/jpeg_cmyk.jpg")).iccProfile)
        for profile in [grey, cmyk] {
            let transform = Transform(profile, flags: 0)
            #expect(transform.status == WI_OK && !transform.isShaper)
        }
        // A red colorant with X = 40 (s15Fixed16): the matrix has entries beyond the path's range.
        var extreme = try #require(ColorTestProfiles.proPhoto)
        let red = try #require(Self.tagOffset("rXYZ", in: extreme))
        extreme.replaceSubrange((red + 8)..<(red + 12), with: [0, 40, 0, 0])
        let transform = Transform(extreme, flags: 0)
        #expect(transform.status == WI_OK && !transform.isShaper)
    }
}

/// A JPEG's conversion runs on its rows as they are decoded (on a helper thread for a large
/// image): the result is the conversion of the whole decoded image, and a decode that fails
/// half-way stops the helper before the pixels go.
@Suite struct DecodeTimeConversionTests {
    /// A 1200x900 JPEG (above the helper thread's threshold) tagged Display P3: gradients
    /// with a pattern, so that every chunk of rows holds different colours.
    static let p3JPEG: Data = {
        let width = 1200, height = 900
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                rgba[i] = UInt8(x * 255 / width)
                rgba[i + 1] = UInt8(y * 255 / height)
                rgba[i + 2] = UInt8(truncatingIfNeeded: (x ^ y) &* 3)
            }
        }
        var image = Image(bitmap: Bitmap(width: width, height: height, rgba: rgba))
        image.colorInfo = ImageColorInfo(iccProfile: try? ImageMetadata(reading: ModernCorpus.data("icc/png_displayp3.png")).iccProfile)
        return (try? ImageCoders.shared.encode(image, as: .jpeg, options: .init(quality: 0.9))) ?? Data()
    }()

    @Test func theDecodeConvertsAsAPassOverTheWholeImageWould() throws {
        let original = try ImageCoders.shared.decode(Self.p3JPEG, options: .init(colorSpace: .original))
        let transform = try #require(ColorTransform.toSRGB(original.colorInfo))
        var expected = original.bitmap
        transform.apply(to: &expected)
        let converted = try ImageCoders.shared.decode(Self.p3JPEG)
        #expect(converted.colorInfo.isEmpty)
        #expect(converted.bitmap == expected)
        #expect(converted.bitmap != original.bitmap)
    }

    /// Cut anywhere (the helper has rows in hand by then), the decode fails with a typed error,
    /// many times in a row (the sanitizers' runs check the helper's memory and locks).
    @Test func aTruncatedLargeJPEGFailsCleanly() throws {
        let data = Self.p3JPEG
        for fraction in stride(from: 0.2, to: 0.99, by: 0.07) {
            let cut = data.prefix(Int(Double(data.count) * fraction))
            #expect(throws: ImageError.self) { try ImageCoders.shared.decode(cut) }
        }
    }
}

import Foundation
import Testing
@testable import WebImage

/// `ImageMetadata(reading:)` against Pillow's reading of the same files (with its AVIF, HEIF and
/// JPEG XL plug-ins): every file of both corpora, and Pillow's own TIFFs, in JPEG, PNG, WebP,
/// TIFF, AVIF, HEIC and JPEG XL. Upstream, the peers' own checks of this are
/// SDWebImage's SDImageCoderTests `test22ThatThumbnailPreserveAspectRatio`'s metadata half and
/// Kingfisher's ImageExtensionTests (properties read back from a file); Pillow is our reference.
@Suite(.timeLimit(.minutes(2))) struct MetadataReadingTests {
    /// Pillow's EXIF tags (the ones `ExifProperties` reads), its ICC profile's SHA-256 and
    /// whether it found XMP, by path; nil when Pillow cannot open the file.
    static func pillowReadings(_ paths: [String]) throws -> [String: [String: Any]] {
        let script = """
        import hashlib, json, sys
        import pillow_avif, pillow_jxl
        from pillow_heif import register_heif_opener
        register_heif_opener()
        from PIL import Image
        from PIL.TiffImagePlugin import IFDRational
        def value(v):
            if isinstance(v, IFDRational):
                return None if v.denominator == 0 else float(v)
            if isinstance(v, bytes):
                if len(v) == 1:
                    return v[0]
                v = v.decode("latin-1")
            if isinstance(v, str):
                v = v.split("\\x00")[0].rstrip(" ")
                return v or None
            if isinstance(v, tuple):
                return [value(x) for x in v]
            return v
        out = {}
        for path in sys.argv[1:]:
            try:
                im = Image.open(path)
                exif = im.getexif()
            except Exception:
                continue
            tags = {str(k): value(v) for k, v in exif.items() if k in (271, 272, 274, 305, 306, 315, 33432)}
            for ifd, keys, prefix in ((0x8769, (36867, 36868, 36881, 42035, 42036, 33434, 33437, 34855, 37386), ""),
                                      (0x8825, (1, 2, 3, 4, 5, 6), "gps")):
                try:
                    found = exif.get_ifd(ifd)
                except Exception:
                    found = {}
                tags.update({prefix + str(k): value(v) for k, v in found.items() if k in keys})
            icc = im.info.get("icc_profile")
            tags["icc"] = hashlib.sha256(icc).hexdigest() if icc else None
            out[path] = tags
        print(json.dumps(out))
        """
        return try PillowPlugIns.json(script, arguments: paths)
    }

    /// Every file of both corpora in a format that carries metadata, and Pillow's own TIFFs.
    static func files() throws -> [String] {
        let folders = [Corpus.directory, ModernCorpus.directory]
        let formats: Set<String> = ["jpg", "jpeg", "png", "webp", "avif", "heic", "jxl"]
        let corpora = folders.flatMap { folder -> [String] in
            guard let walk = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
            return walk.compactMap { ($0 as? URL)?.path }.filter { formats.contains(URL(fileURLWithPath: $0).pathExtension.lowercased()) }
        }
        return (corpora + (try PillowSuite.files(extensions: ["tif", "tiff"])).map(\.path)).sorted()
    }

    /// Ours, as the same keys.
    static func ours(_ data: Data) -> [String: Any] {
        let metadata = ImageMetadata(reading: data)
        var tags: [String: Any] = [:]
        if let exif = metadata.exif {
            let values: [(String, Any?)] = [
                ("271", exif.make), ("272", exif.model), ("274", exif.orientation?.rawValue), ("305", exif.software),
                ("306", exif.dateTime), ("315", exif.artist), ("33432", exif.copyright), ("36867", exif.dateTimeOriginal),
                ("36868", exif.dateTimeDigitized), ("36881", exif.offsetTimeOriginal), ("42035", exif.lensMake),
                ("42036", exif.lensModel), ("33434", exif.exposureTime), ("33437", exif.fNumber), ("34855", exif.isoSpeed),
                ("37386", exif.focalLength),
            ]
            for (key, value) in values { if let value { tags[key] = value } }
        }
        if let icc = metadata.iccProfile { tags["icc"] = icc.withUnsafeBytes { Digest.sha256($0) } }
        return tags
    }

    @Test func everyCorpusFileReadsAsPillowReadsIt() throws {
        let files = try Self.files()
        let pillow = try Self.pillowReadings(files)
        var compared = 0, withEXIF = 0, withICC = 0, withGPS = 0
        for path in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let ours = Self.ours(data), metadata = ImageMetadata(reading: data)
            let name = URL(fileURLWithPath: path).lastPathComponent
            // Pillow's fuzzing finds: Pillow stops reading a directory at its first broken entry,
            // this reader skips that entry alone; reading them must only end well (it did).
            // A BigTIFF's tags are not read here (an EXIF block is always classic TIFF).
            if name.hasPrefix("crash-") || name.hasPrefix("oom-") || name.contains("bigtiff") { continue }
            // Pillow 13 reads this file's Software tag as the number 3; Debian's Pillow and this
            // reader read the string it holds.
            if name == "old-style-jpeg-compression-no-samplesperpixel.tif" {
                #expect(metadata.exif?.software == "Kofax standard Multi-Page TIFF Storage Filter v3.03.000")
                continue
            }
            guard let theirs = pillow[path] else { continue }
            compared += 1
            for key in ["271", "272", "305", "306", "315", "33432", "36867", "36868", "36881", "42035", "42036"] {
                let expected = (theirs[key] as? String).flatMap { $0.allSatisfy(\.isASCII) ? $0 : nil }
                guard (theirs[key] as? String)?.allSatisfy(\.isASCII) != false else { continue }
                #expect(ours[key] as? String == expected, "\(name) tag \(key)")
            }
            switch URL(fileURLWithPath: path).pathExtension {
            case "avif", "heic":
                // The plug-ins report the orientation their irot and imir give, and 1 once they
                // applied it: not the tag stored. Ours is the tag (modern/SOURCES.md names it).
                #expect(metadata.exif?.orientation == (name.hasPrefix("exif_orientation6") ? .right : nil), "\(name)")
            case "jxl" where name == "jpeg_recompressed_exif8.jxl":
                // Its Exif box is Brotli-compressed (`brob`): not read here.
                #expect(metadata.exif == nil)
            default:
                let orientation = (theirs["274"] as? Int).flatMap { (1...8).contains($0) ? $0 : nil }
                #expect(metadata.orientation?.rawValue == orientation, "\(name) orientation")
            }
            for key in ["33434", "33437", "37386"] {
                let expected = theirs[key] as? Double
                #expect((ours[key] as? Double).map { abs($0 - (expected ?? .nan)) < 1e-9 } ?? (expected == nil), "\(name) tag \(key)")
            }
            #expect(ours["34855"] as? Int == theirs["34855"] as? Int, "\(name) ISO")
            if let latitude = theirs["gps2"] as? [Double], latitude.count == 3, let longitude = theirs["gps4"] as? [Double], longitude.count == 3 {
                let gps = try #require(metadata.exif?.gps, "\(name) GPS")
                let sign = { (ref: Any?, negative: String) in (ref as? String) == negative ? -1.0 : 1.0 }
                #expect(abs(gps.latitude - sign(theirs["gps1"], "S") * (latitude[0] + latitude[1] / 60 + latitude[2] / 3600)) < 1e-9, "\(name)")
                #expect(abs(gps.longitude - sign(theirs["gps3"], "W") * (longitude[0] + longitude[1] / 60 + longitude[2] / 3600)) < 1e-9, "\(name)")
                withGPS += 1
            }
            // A JPEG XL profile is inside the codestream: Pillow's comes from decoding it. A PNG
            // with two iCCP chunks: libpng (and so our decoder) keeps the first, Pillow the last.
            if URL(fileURLWithPath: path).pathExtension != "jxl", name != "issue_1825.png" {
                #expect(ours["icc"] as? String == theirs["icc"] as? String, "\(name) ICC profile")
            }
            if metadata.exif != nil { withEXIF += 1 }
            if metadata.iccProfile != nil { withICC += 1 }
        }
        #expect(compared > 300 && withEXIF > 60 && withICC > 20, "\(compared) files, \(withEXIF) with EXIF, \(withICC) with ICC, \(withGPS) with GPS")
    }
}

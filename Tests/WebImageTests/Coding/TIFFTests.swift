import Foundation
import Testing
@testable import WebImage
import WebImageTIFF

/// TIFF through libtiff, against Pillow's own TIFF test images: every file Pillow reads in an
/// 8-bit mode (and 16-bit RGB) decodes to what Pillow shows, orientation included; files in
/// modes Pillow does not show as colours (LAB, 16- and 32-bit integer and float grey) decode or
/// are refused with an `ImageError`; broken files never crash.
@Suite struct TIFFTests {
    static let coders = ImageCoders([TIFFCoder()] + ImageCoders.builtIn)

    @Test func pillowsTIFFsDecodeAsPillowShowsThem() throws {
        let files = try PillowSuite.files(extensions: ["tif", "tiff"])
        #expect(files.count >= 90)
        let renders = TemporaryDirectory("tiff-renders")
        defer { renders.remove() }
        let pillow = try PillowSuite.read(files, renders: renders.url)
        var exact = 0, compared = 0
        for (index, file) in files.enumerated() {
            let name = file.lastPathComponent
            let result = Result { try Self.coders.decode(try Data(contentsOf: file)) }
            guard case .success(let image) = result else {
                if case .failure(let error) = result { #expect(error is ImageError, "\(name): \(error)") }
                continue
            }
            guard let reference = pillow[file.path] ?? nil else { continue }   // Pillow refuses; we show something
            #expect(image.format == .tiff && image.width == reference.width && image.height == reference.height, "\(name)")
            guard ["1", "L", "P", "RGB", "RGBA", "CMYK", "LA", "YCbCr"].contains(reference.mode) else { continue }
            compared += 1
            if image.bitmap.sha256 == reference.sha256 { exact += 1; continue }
            let expected = try Image(data: Data(contentsOf: renders.url.appendingPathComponent("\(index).png"))).bitmap
            let distance = try #require(PixelDistance(image.bitmap, expected), "\(name)")
            // 16-bit samples and premultiplied alpha round differently (libtiff goes through 8-bit premultiplied).
            #expect(distance.meanAbs <= 2.5, "\(name): mean \(distance.meanAbs)")
        }
        #expect(compared >= 60 && exact >= 55, "\(exact) exact of \(compared)")
    }

    @Test func theFirstPageOfAMultiPageFileIsTheImage() throws {
        let file = PillowSuite.directory.appendingPathComponent("multipage.tiff")
        let image = try Self.coders.decode(try Data(contentsOf: file))
        #expect(image.frameCount == 1 && !image.isAnimated)
        let pillow = try PillowSuite.read([file])
        #expect(image.bitmap.sha256 == pillow[file.path]??.sha256)
    }

    @Test func hugeAndCutFilesAreTypedErrors() throws {
        let data = try Data(contentsOf: PillowSuite.directory.appendingPathComponent("hopper.tif"))
        #expect(throws: ImageError.self) { try Self.coders.decode(data, options: .init(pixelLimit: 1000)) }
        // Cut anywhere before its directory (written last, after the pixels), it cannot decode.
        let directory = Int(data[4]) | Int(data[5]) << 8 | Int(data[6]) << 16 | Int(data[7]) << 24
        #expect(directory > data.count / 2)
        for cut in stride(from: 8, to: directory + 2, by: max(1, directory / 40)) {
            #expect(throws: ImageError.self) { try Self.coders.decode(data.prefix(cut)) }
        }
        // A header claiming 65535 x 65535 is refused before anything is allocated.
        let tags = [(256, 65535), (257, 65535), (258, 8), (262, 1), (273, 8), (278, 65535), (279, 1)]
        var header = Data([0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, UInt8(tags.count), 0])
        for (tag, value) in tags {
            let long = tag == 273 || tag == 279
            header += [UInt8(tag & 0xFF), UInt8(tag >> 8), long ? 4 : 3, 0, 1, 0, 0, 0, UInt8(value & 0xFF), UInt8(value >> 8), 0, 0]
        }
        header += [0, 0, 0, 0]
        #expect { try Self.coders.decode(header) } throws: { error in
            if case ImageError.tooLarge = error { return true }
            if case ImageError.decodingFailed(let inner, _, _) = error, case .tooLarge = inner { return true }
            return false
        }
    }
}

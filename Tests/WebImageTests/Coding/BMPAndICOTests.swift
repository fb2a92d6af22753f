import Foundation
import Testing
@testable import WebImage

/// BMP and ICO, our own decoders, against bmpsuite and Pillow's icons (Pillow's test images):
/// every file Pillow reads decodes to the same pixels; a file Pillow refuses is refused with an
/// `ImageError` or shown as bmpsuite's own reference render shows it; bad files never crash.
@Suite struct BMPAndICOTests {
    @Test func bmpsuiteDecodesAsPillowReadsIt() throws {
        var files: [URL] = []
        for folder in ["g", "q", "b"] { files += try PillowSuite.files("bmp/\(folder)", extensions: ["bmp"]) }
        #expect(files.count >= 60)
        let pillow = try PillowSuite.read(files)
        var matched = 0
        for file in files {
            let name = "\(file.deletingLastPathComponent().lastPathComponent)/\(file.lastPathComponent)"
            let result = Result { try ImageCoders.shared.decode(try Data(contentsOf: file)) }
            switch (pillow[file.path] ?? nil, result) {
            case (let reference?, .success(let image)):
                if name == "b/badrle.bmp" { continue }   // bad RLE: both show something, not the same thing
                #expect(image.format == .bmp && image.width == reference.width && image.height == reference.height, "\(name)")
                #expect(image.bitmap.sha256 == reference.sha256, "\(name)")
                matched += 1
            case (_?, .failure(let error)):
                Issue.record("\(name): Pillow reads it, we refuse it: \(error)")
            case (nil, .failure(let error)):
                #expect(error is ImageError, "\(name): \(error)")
            case (nil, .success(let image)):
                // Pillow refuses a layout browsers show: compare with bmpsuite's own render when it has one.
                let stem = file.deletingPathExtension().lastPathComponent
                let render = PillowSuite.directory.appendingPathComponent("bmp/html/\(stem).png")
                if let data = try? Data(contentsOf: render) {
                    let expected = try Image(data: data).bitmap
                    // Colours under full transparency are not shown: compared as black.
                    func shown(_ bitmap: Bitmap) -> Bitmap {
                        var rgba = bitmap.rgba
                        for i in stride(from: 0, to: rgba.count, by: 4) where rgba[i + 3] == 0 { rgba[i] = 0; rgba[i + 1] = 0; rgba[i + 2] = 0 }
                        return Bitmap(width: bitmap.width, height: bitmap.height, rgba: rgba)
                    }
                    let distance = try #require(PixelDistance(shown(image.bitmap), shown(expected)), "\(name): size")
                    #expect(distance.maxAbs <= 8, "\(name): max \(distance.maxAbs) from bmpsuite's render")
                }
            }
        }
        #expect(matched >= 40)
    }

    @Test func iconsDecodeTheirLargestImageAsPillowDoes() throws {
        let files = try PillowSuite.files(extensions: ["ico"])
        #expect(files.count >= 8)
        let pillow = try PillowSuite.read(files)
        for file in files {
            let result = Result { try ImageCoders.shared.decode(try Data(contentsOf: file)) }
            switch (pillow[file.path] ?? nil, result) {
            case (let reference?, .success(let image)):
                #expect(image.format == .ico && image.width == reference.width && image.height == reference.height, "\(file.lastPathComponent)")
                #expect(image.bitmap.sha256 == reference.sha256, "\(file.lastPathComponent)")
            case (_, .failure(let error)):
                #expect(error is ImageError, "\(file.lastPathComponent): \(error)")
            case (nil, .success):
                break
            }
        }
    }

    /// The entry that fits a thumbnail: the smallest at least as large, not the largest.
    @Test func aThumbnailDecodesTheBestFittingEntry() throws {
        let png = { (side: Int) in try! Image(bitmap: Fixtures.gradient(width: side, height: side)).encoded(as: .png) }
        let images = [16, 32, 48, 256].map { ($0, png($0)) }
        var data = Data([0, 0, 1, 0, UInt8(images.count), 0])
        var offset = 6 + 16 * images.count
        for (side, bytes) in images {
            data += [UInt8(side % 256), UInt8(side % 256), 0, 0, 1, 0, 32, 0]
            data += withUnsafeBytes(of: UInt32(bytes.count).littleEndian, Array.init)
            data += withUnsafeBytes(of: UInt32(offset).littleEndian, Array.init)
            offset += bytes.count
        }
        for (_, bytes) in images { data += bytes }
        #expect(try ImageCoders.shared.decode(data).width == 256)
        #expect(try ImageCoders.shared.decode(data, options: .init(maxPixelSize: 32)).width == 32)
        #expect(try ImageCoders.shared.decode(data, options: .init(maxPixelSize: 40)).width == 40, "48 reduced to 40")
        #expect(try ImageCoders.shared.decode(data, options: .init(maxPixelSize: 16)).bitmap == (try Image(data: images[0].1)).bitmap)
        // A directory entry pointing outside the file is skipped; none left is a typed error.
        var lying = data
        lying[6 + 12] = 0xFF; lying[6 + 13] = 0xFF; lying[6 + 14] = 0xFF
        #expect(try ImageCoders.shared.decode(lying).width == 256)
        #expect(throws: ImageError.self) { try ImageCoders.shared.decode(Data([0, 0, 1, 0, 1, 0] + [UInt8](repeating: 0xFF, count: 16))) }
    }

    /// The header's size is checked before the pixels exist, and a file cut anywhere is a typed
    /// error, never a crash or a half image.
    @Test func hugeAndTruncatedFilesAreTypedErrors() throws {
        let big = try Data(contentsOf: PillowSuite.directory.appendingPathComponent("bmp/b/reallybig.bmp"))
        #expect { try ImageCoders.shared.decode(big) } throws: { error in
            if case ImageError.decodingFailed = error { return true }
            if case ImageError.tooLarge = error { return true }
            return false
        }
        let whole = try Data(contentsOf: PillowSuite.directory.appendingPathComponent("bmp/g/pal8rle.bmp"))
        for cut in stride(from: 1, to: whole.count, by: 97) {
            #expect(throws: ImageError.self) { try ImageCoders.shared.decode(whole.prefix(cut)) }
        }
        let limited = try Data(contentsOf: PillowSuite.directory.appendingPathComponent("bmp/g/rgb24.bmp"))
        #expect(throws: ImageError.self) { try ImageCoders.shared.decode(limited, options: .init(pixelLimit: 100)) }
    }
}

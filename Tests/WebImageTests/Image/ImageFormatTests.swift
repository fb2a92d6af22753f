import Foundation
import Testing
@testable import WebImage

@Suite struct ImageFormatTests {
    @Test func sniffsEveryFormatFromMagicBytes() {
        func data(_ bytes: [UInt8]) -> Data { Data(bytes + [UInt8](repeating: 0, count: 24)) }
        #expect(ImageFormat(sniffing: data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])) == .png)
        #expect(ImageFormat(sniffing: data([0xFF, 0xD8, 0xFF, 0xE0])) == .jpeg)
        #expect(ImageFormat(sniffing: data(Array("GIF89a".utf8))) == .gif)
        #expect(ImageFormat(sniffing: data(Array("GIF87a".utf8))) == .gif)
        #expect(ImageFormat(sniffing: data(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8))) == .webp)
        #expect(ImageFormat(sniffing: data([0, 0, 0, 0x18] + Array("ftypheic".utf8))) == .heic)
        #expect(ImageFormat(sniffing: data([0, 0, 0, 0x18] + Array("ftypmif1".utf8))) == .heif)
        #expect(ImageFormat(sniffing: data([0, 0, 0, 0x18] + Array("ftypavif".utf8))) == .avif)
        #expect(ImageFormat(sniffing: data([0x49, 0x49, 0x2A, 0x00])) == .tiff)
        #expect(ImageFormat(sniffing: data([0x4D, 0x4D, 0x00, 0x2A])) == .tiff)
        #expect(ImageFormat(sniffing: data(Array("BM".utf8))) == .bmp)
        #expect(ImageFormat(sniffing: data(Array("%PDF-1.7".utf8))) == .pdf)
        #expect(ImageFormat(sniffing: data([0, 0, 1, 0, 1, 0])) == .ico)
        #expect(ImageFormat(sniffing: Data("<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8)) == .svg)
        #expect(ImageFormat(sniffing: Data("just text".utf8)) == .unknown)
        #expect(ImageFormat(sniffing: Data()) == .unknown)
    }

    @Test func extensionsAndMimeTypes() {
        #expect(ImageFormat(fileExtension: "JPG") == .jpeg)
        #expect(ImageFormat(fileExtension: "tiff") == nil)
        #expect(ImageFormat.webp.mimeType == "image/webp")
        #expect(ImageFormat.svg.mimeType == "image/svg+xml")
        #expect(ImageFormat.jpeg.fileExtension == "jpg")
    }
}

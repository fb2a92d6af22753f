import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageJXL
import WebImageTIFF

/// What a decoder would spend beyond the declared canvas is counted before it is spent: a
/// grid's per-tile decoders, a TIFF tile, every frame of a JPEG XL animation. Each input is
/// built here, as a stranger would build it.
@Suite("Decoder resource bounds")
struct DecoderResourceBoundsTests {
    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + body.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 255), UInt8(size >> 8 & 255), UInt8(size & 255)] + Array(type.utf8) + body
    }
    static func be32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 255), UInt8(value >> 16 & 255), UInt8(value >> 8 & 255), UInt8(value & 255)] }
    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 255), UInt8(value & 255)] }

    /// An HEIF/AVIF file whose primary item is a grid of `columns` x `rows` tiles of
    /// `tile` x `tile` pixels, every tile sharing one small payload.
    static func grid(brand: String, codec: String, columns: Int, rows: Int, tile: Int) -> Data {
        let tiles = columns * rows
        let ftyp = box("ftyp", Array(brand.utf8) + be32(0) + Array(brand.utf8) + Array("mif1".utf8))
        let hdlr = box("hdlr", be32(0) + be32(0) + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
        let pitm = box("pitm", be32(0) + be16(1))
        var entries: [UInt8] = box("infe", [2, 0, 0, 0] + be16(1) + be16(0) + Array("grid".utf8) + [0])
        for id in 0..<tiles { entries += box("infe", [2, 0, 0, 0] + be16(2 + id) + be16(0) + Array(codec.utf8) + [0]) }
        let iinf = box("iinf", be32(0) + be16(tiles + 1) + entries)
        let canvas = box("ispe", be32(0) + be32(columns * tile) + be32(rows * tile))
        let tileSize = box("ispe", be32(0) + be32(tile) + be32(tile))
        let iprp = box("iprp", box("ipco", canvas + tileSize))
        let meta = box("meta", be32(0) + hdlr + pitm + iinf + iprp)
        return Data(ftyp + meta + box("mdat", [UInt8](repeating: 0x12, count: 40)))
    }

    @Test("An AVIF grid of 12,100 64x64 tiles (49.6 MP, under a 50 MP limit) is refused for its tiles' decoders")
    func avifGrid() throws {
        let data = Self.grid(brand: "avif", codec: "av01", columns: 110, rows: 110, tile: 64)
        let items = try #require(ISOBMFFItems(data))
        #expect(items.itemCount == 12_101 && items.largestSize?.width == 7040 && items.largestSize?.height == 7040)
        let error = #expect(throws: ImageError.self) { try AVIFCoder().decode(data, options: .init(pixelLimit: 50_000_000)) }
        guard case .undecodable(.avif, let reason) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("12101 items") && reason.contains("7040x7040"), "\(reason)")
    }

    @Test("An HEIC grid of 10,000 tiles sharing one payload is refused before libheif")
    func heicGrid() throws {
        let data = Self.grid(brand: "heic", codec: "hvc1", columns: 100, rows: 100, tile: 64)
        let error = #expect(throws: ImageError.self) { try HEIFCoder().decode(data, options: .init(pixelLimit: 50_000_000)) }
        guard case .undecodable(_, let reason) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("10001 items"), "\(reason)")
    }

    @Test("The grids of the corpus (2x2, 3x2) still decode")
    func ordinaryGrids() throws {
        for name in ["grid_2x2_lossless.avif", "grid_3x2_lossy_420.avif"] {
            let data = try ModernCorpus.data("avif/" + name)
            #expect(try AVIFCoder().decode(data, options: .init()).width > 0, "\(name)")
        }
    }

    @Test("AVIF and HEIC refusals of a 65535x65535 declaration name that size", arguments: ["avif", "heic"])
    func declaredSize(folder: String) throws {
        let data = try ModernCorpus.data("\(folder)/bad_declared_65535x65535.\(folder)")
        let error = #expect(throws: ImageError.self) { try ModernCorpus.coders.decode(data) }
        #expect(error == .tooLarge(width: 65535, height: 65535, limit: ImageDecodingOptions.defaultPixelLimit), "\(String(describing: error))")
    }

    /// A 16x16 TIFF whose one tile is 12288x12288 (libtiff would allocate the whole tile, and
    /// its RGBA copy, to read it).
    static let hugeTileTIFF: Data = {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 255), UInt8(v >> 8)] }
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 255), UInt8(v >> 8 & 255), UInt8(v >> 16 & 255), UInt8(v >> 24 & 255)] }
        let entries: [(tag: Int, type: Int, value: Int)] = [
            (256, 3, 16), (257, 3, 16), (258, 3, 8), (259, 3, 1), (262, 3, 1), (277, 3, 1), (284, 3, 1),
            (322, 4, 12288), (323, 4, 12288), (324, 4, 8 + 2 + 11 * 12 + 4), (325, 4, 4096),
        ]
        var tiff: [UInt8] = Array("II".utf8) + le16(42) + le32(8) + le16(entries.count)
        for entry in entries {
            tiff += le16(entry.tag) + le16(entry.type) + le32(1) + (entry.type == 3 ? le16(entry.value) + le16(0) : le32(entry.value))
        }
        return Data(tiff + le32(0) + [UInt8](repeating: 0, count: 4096))
    }()

    @Test("A TIFF tile larger than its page is refused")
    func hugeTIFFTile() throws {
        let error = #expect(throws: ImageError.self) { try TIFFCoder().decode(Self.hugeTileTIFF, options: .init()) }
        guard case .undecodable(.tiff, let reason) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("12288x12288 tile"), "\(reason)")
    }

    @Test("A JPEG XL animation's frames count against the pixel limit together; its first frame alone does not")
    func jxlAnimation() throws {
        let frames = (0..<20).map { index in
            ImageFrame(bitmap: Bitmap(width: 256, height: 256, rgba: [UInt8](repeating: UInt8(index * 10), count: 256 * 256 * 4)), duration: 0.05)
        }
        let data = try JXLCoder().encode(Image(frames: frames), as: .jxl, options: ImageEncodingOptions(quality: 0.5, effort: 0))
        let limited = ImageDecodingOptions(pixelLimit: 1_000_000)   // each canvas 65,536 pixels; 20 of them 1.3 M
        #expect(throws: ImageError.animationTooLarge(width: 256, height: 256, frames: 20, limit: 1_000_000)) {
            try JXLCoder().decode(data, options: limited)
        }
        var first = limited
        first.firstFrameOnly = true
        #expect(try JXLCoder().decode(data, options: first).frameCount == 1)
        #expect(try JXLCoder().decode(data, options: .init()).frameCount == 20)
    }
}

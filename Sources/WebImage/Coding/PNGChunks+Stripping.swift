import Foundation

extension PNGChunks {
    /// The chunks that show the image and stay when metadata is stripped: the critical ones,
    /// transparency, colour (gamma, chromaticities, sRGB, ICC, cICP, HDR mastering), sample
    /// depths, background, pixel size and APNG's animation chunks. Text, time, eXIf and every
    /// other ancillary chunk (private ones included) are dropped.
    static let displayChunks: Set<String> = ["IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "cICP",
                                             "mDCv", "cLLi", "sBIT", "bKGD", "pHYs", "acTL", "fcTL", "fdAT"]

    /// The eXIf chunk's TIFF block, if the file has one.
    func exifBlock(in data: Data) -> Data? {
        chunks.first { $0.type == "eXIf" && $0.crcMatches }.map { data[(data.startIndex + $0.data.lowerBound)..<(data.startIndex + $0.data.upperBound)] }
    }

    /// `data` with its display chunks only (see `displayChunks`; a critical chunk not known here
    /// stays, since a decoder needs it), nothing after IEND, `exif` as an eXIf chunk after IHDR
    /// and `xmp` as an uncompressed `XML:com.adobe.xmp` iTXt chunk after it. Nil when the chunks
    /// do not end with IEND.
    func stripped(_ data: Data, exif: [UInt8]?, xmp: [UInt8]? = nil) -> Data? {
        guard chunks.first?.type == "IHDR", chunks.last?.type == "IEND", !endsMidChunk else { return nil }
        var out = Data(capacity: data.count)
        out.append(contentsOf: PNGChunks.signature)
        for chunk in chunks {
            let critical = chunk.type.utf8.first.map { $0 & 0x20 == 0 } ?? false
            if critical || PNGChunks.displayChunks.contains(chunk.type) {
                out.append(data[(data.startIndex + chunk.whole.lowerBound)..<(data.startIndex + chunk.whole.upperBound)])
            }
            if chunk.type == "IHDR", let exif { out.appendPNGChunk(type: "eXIf", data: exif) }
            if chunk.type == "IHDR", let xmp {
                // iTXt: keyword, NUL, not compressed, method 0, no language tag, no translated keyword.
                out.appendPNGChunk(type: "iTXt", data: Array("XML:com.adobe.xmp\0".utf8) + [0, 0, 0, 0] + xmp)
            }
        }
        return out
    }
}

import Foundation

/// What an HEIF or AVIF file (ISOBMFF) declares about its still images, read from the boxes
/// before a decoder is given the file: how many items it has (a grid's tiles are items, each
/// given a decoder of its own) and the largest size an `ispe` property declares (a grid's
/// canvas, or its largest tile).
///
/// Only `meta` (top level) and within it `iinf` and `iprp`/`ipco` are read; every box size is
/// checked against its parent, and nothing is allocated for what the file declares.
package struct ISOBMFFItems: Equatable {
    /// The items `iinf` declares (tiles, the grid, alpha, Exif, thumbnails), 0 without one.
    package var itemCount = 0
    /// The largest `ispe` width x height, in pixels: the declared size a refusal names.
    package var largestSize: (width: Int, height: Int)?

    package static func == (a: ISOBMFFItems, b: ISOBMFFItems) -> Bool {
        a.itemCount == b.itemCount && a.largestSize?.width == b.largestSize?.width && a.largestSize?.height == b.largestSize?.height
    }

    /// The memory a decoder of one item costs while a grid is decoded, counted in pixels (four
    /// bytes each) against the pixel limit: libavif keeps a decoder per tile, about 400 KB each.
    package static let pixelsPerItem = 100_000

    /// Reads `data`'s boxes; nil when it has no `meta` box where one is looked for.
    package init?(_ data: Data) {
        guard let items = data.withUnsafeBytes({ Self(reading: $0) }) else { return nil }
        self = items
    }

    private init() {}

    private init?(reading bytes: UnsafeRawBufferPointer) {
        guard let meta = Self.children(of: bytes, in: 0..<bytes.count).first(where: { $0.type == "meta" }),
              meta.body.count >= 4 else { return nil }
        // meta is a full box: version and flags, then its children.
        let metaChildren = Self.children(of: bytes, in: (meta.body.lowerBound + 4)..<meta.body.upperBound)
        if let iinf = metaChildren.first(where: { $0.type == "iinf" }), iinf.body.count >= 6 {
            let at = iinf.body.lowerBound
            itemCount = bytes[at] == 0 ? Int(bytes[at + 4]) << 8 | Int(bytes[at + 5])
                : (iinf.body.count >= 8 ? Int(Self.u32(bytes, at + 4)) : 0)
        }
        if let iprp = metaChildren.first(where: { $0.type == "iprp" }),
           let ipco = Self.children(of: bytes, in: iprp.body).first(where: { $0.type == "ipco" }) {
            for ispe in Self.children(of: bytes, in: ipco.body) where ispe.type == "ispe" && ispe.body.count >= 12 {
                let width = Int(Self.u32(bytes, ispe.body.lowerBound + 4)), height = Int(Self.u32(bytes, ispe.body.lowerBound + 8))
                if Self.area(width, height) > (largestSize.map { Self.area($0.width, $0.height) } ?? -1) { largestSize = (width, height) }
            }
        }
    }

    /// Whether decoding these items would go over `pixelLimit`, counting the largest declared
    /// size and each item's decoder (`pixelsPerItem`): a refusal, or nil. One item (a plain
    /// image), and a size over the limit by itself, are the decoder's to refuse (naming the size).
    package func refusal(format: ImageFormat, pixelLimit: Int) -> ImageError? {
        let canvas = largestSize.map { Self.area($0.width, $0.height) } ?? 0
        guard itemCount > 1, canvas <= pixelLimit else { return nil }
        let (items, overflow) = itemCount.multipliedReportingOverflow(by: Self.pixelsPerItem)
        guard overflow || canvas + items > pixelLimit else { return nil }
        let size = largestSize.map { "\($0.width)x\($0.height)" } ?? "an undeclared"
        return .undecodable(format, reason: "\(itemCount) items (the tiles of a grid) on \(size) canvas: with each item's decoder counted, over the pixel limit of \(pixelLimit)")
    }

    /// `width` x `height`, or `Int.max` when that overflows (two 32-bit sides can).
    private static func area(_ width: Int, _ height: Int) -> Int {
        let (area, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? Int.max : area
    }

    private struct Box {
        let type: String
        let body: Range<Int>
    }

    private static func u32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }

    /// The boxes in `range`, as far as they are well formed.
    private static func children(of bytes: UnsafeRawBufferPointer, in range: Range<Int>) -> [Box] {
        var boxes: [Box] = []
        var at = range.lowerBound
        while range.upperBound - at >= 8, boxes.count < 4096 {
            var size = Int(u32(bytes, at))
            var header = 8
            if size == 1 {
                guard range.upperBound - at >= 16 else { break }
                let large = UInt64(u32(bytes, at + 8)) << 32 | UInt64(u32(bytes, at + 12))
                guard large <= UInt64(range.upperBound - at) else { break }
                size = Int(large)
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, size <= range.upperBound - at else { break }
            let type = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(at + 4)..<(at + 8)]), as: UTF8.self)
            boxes.append(Box(type: type, body: (at + header)..<(at + size)))
            at += size
        }
        return boxes
    }
}

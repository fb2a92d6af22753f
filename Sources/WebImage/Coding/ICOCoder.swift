import CWebImageCodecs
import Foundation

/// ICO and CUR (favicons), read with our own directory parser: the entry that best fits the
/// size a load asks for (the smallest at least `maxPixelSize`, or at least the fill box, else
/// the largest), or the largest without one, the deeper colour breaking a tie. Its payload is
/// a PNG (decoded by `PNGCoder`) or a DIB (decoded by `BMPCoder`'s decoder, with its AND mask,
/// or its alpha byte at 32 bits). Decode only.
public struct ICOCoder: ImageCoder {
    /// The ICO coder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .ico }

    /// One directory entry.
    struct Entry: Equatable {
        var width: Int
        var height: Int
        var bitCount: Int
        var range: Range<Int>
    }

    /// The entries of the directory whose payload lies inside `data`.
    static func entries(_ data: Data) throws -> [Entry] {
        let bytes = [UInt8](data.prefix(6 + 16 * 256))
        guard bytes.count >= 6, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 || bytes[2] == 2, bytes[3] == 0 else {
            throw ImageError.undecodable(.ico, reason: "not an icon directory")
        }
        let count = Int(bytes[4]) | Int(bytes[5]) << 8
        guard count > 0 else { throw ImageError.undecodable(.ico, reason: "an icon with no images") }
        var entries: [Entry] = []
        for index in 0..<count {
            let at = 6 + index * 16
            guard at + 16 <= bytes.count else { break }
            func u32(_ o: Int) -> Int { Int(bytes[at + o]) | Int(bytes[at + o + 1]) << 8 | Int(bytes[at + o + 2]) << 16 | Int(bytes[at + o + 3]) << 24 }
            let size = u32(8), offset = u32(12)
            guard size > 0, offset >= 6, offset < data.count, size <= data.count - offset else { continue }
            entries.append(Entry(width: bytes[at] == 0 ? 256 : Int(bytes[at]), height: bytes[at + 1] == 0 ? 256 : Int(bytes[at + 1]),
                                 bitCount: Int(bytes[at + 6]) | Int(bytes[at + 7]) << 8, range: offset..<(offset + size)))
        }
        guard !entries.isEmpty else { throw ImageError.undecodable(.ico, reason: "no icon image lies inside the file") }
        return entries
    }

    /// The entry to decode for `options`.
    static func best(_ entries: [Entry], options: ImageDecodingOptions) -> Entry {
        let byArea = entries.sorted { ($0.width * $0.height, $0.bitCount) < ($1.width * $1.height, $1.bitCount) }
        let fill = options.fillSize.map { max($0.width, $0.height) }
        if let wanted = [options.maxPixelSize, fill].compactMap({ $0 }).filter({ $0 > 0 }).min(),
           let fitting = byArea.first(where: { max($0.width, $0.height) >= wanted }) {
            // The smallest that covers the size, the deepest of those of its size.
            return byArea.last { $0.width == fitting.width && $0.height == fitting.height }!
        }
        return byArea.last!
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        let entry = ICOCoder.best(try ICOCoder.entries(data), options: options)
        let payload = data.subdata(in: (data.startIndex + entry.range.lowerBound)..<(data.startIndex + entry.range.upperBound))
        let bitmap: Bitmap
        if ImageFormat(sniffing: payload) == .png {
            bitmap = try PNGCoder().decode(payload, options: options).bitmap
        } else {
            bitmap = try BMPCoder.decodeDIB(payload, iconDIB: true, format: .ico, options: options)
        }
        let finishing = DecodeFinishing(width: bitmap.width, height: bitmap.height, exifOrientation: nil, options: options)
        let frame = ImageFrame(bitmap: finishing(bitmap))
        return Image(firstFrame: frame, frames: .preloaded([frame]), format: .ico, loopCount: nil, scale: options.scale,
                     exifOrientation: nil, orientationApplied: false)
    }

    public func canEncode(_ format: ImageFormat) -> Bool { false }

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        throw ImageError.encodingFailed(format, reason: "the ICO coder does not write icons")
    }
}

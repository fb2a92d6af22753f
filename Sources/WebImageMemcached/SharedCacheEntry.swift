import Foundation

/// The layout of a tier entry, version 1: "WIT", the version byte, the validators' length
/// (UInt32, big-endian), the validators (the HTTP `ETag` / `Last-Modified` the disk cache keeps
/// as extended data), then the encoded image. The version is in the key's prefix as well, so a
/// new layout never reads an old entry as valid.
struct SharedCacheEntry: Equatable {
    static let magic: [UInt8] = Array("WIT".utf8)
    static let version: UInt8 = 1

    var data: Data
    var validators: Data?

    func encoded() -> Data {
        var out = Data(capacity: 8 + (validators?.count ?? 0) + data.count)
        out.append(contentsOf: Self.magic)
        out.append(Self.version)
        let count = UInt32(validators?.count ?? 0)
        out.append(contentsOf: [UInt8(count >> 24), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF), UInt8(count & 0xFF)])
        if let validators { out.append(validators) }
        out.append(data)
        return out
    }

    /// The entry in `bytes`, or nil when they are not a version-1 entry with an image.
    init?(decoding bytes: Data) {
        let bytes = Data(bytes)   // indices from 0
        guard bytes.count > 8, Array(bytes[0..<3]) == Self.magic, bytes[3] == Self.version else { return nil }
        let count = Int(bytes[4]) << 24 | Int(bytes[5]) << 16 | Int(bytes[6]) << 8 | Int(bytes[7])
        guard count <= bytes.count - 8 - 1 else { return nil }
        validators = count > 0 ? bytes.subdata(in: 8..<(8 + count)) : nil
        data = bytes.subdata(in: (8 + count)..<bytes.count)
    }

    init(data: Data, validators: Data?) {
        self.data = data
        self.validators = validators
    }
}

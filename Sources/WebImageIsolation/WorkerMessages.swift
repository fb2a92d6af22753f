import Foundation
import WebImage

/// The two messages between a pool and a worker, as bytes: a decode request (its data in an
/// attached shared-memory file) and the worker's reply (the pixels of every frame in another).
///
/// The parent reads a reply as a stranger's input: every size, count and string is checked
/// against what was asked and what the attached file holds before anything is allocated
/// (`WorkerReply.init(parsing:)`, fuzzed by FuzzWorkerReply).
struct WorkerRequest: Equatable {
    var options: ImageDecodingOptions
    /// The CPU time the decode may use, in seconds.
    var cpuSeconds: UInt32
    /// Bytes of data in the attached file.
    var dataLength: Int

    static let magic: UInt32 = 0x5749_4451   // "WIDQ"

    var bytes: [UInt8] {
        var out = ByteWriter()
        out.u32(Self.magic)
        out.i64(options.maxPixelSize ?? -1)
        out.i64(options.maxPixelCount ?? -1)
        out.i64(options.fillSize?.width ?? -1)
        out.i64(options.fillSize?.height ?? -1)
        out.i64(options.pixelLimit)
        out.f64(options.scale)
        out.i64(options.pageIndex)
        out.f64(options.fillAnchor?.x ?? -1)
        out.f64(options.fillAnchor?.y ?? -1)
        var flags: UInt32 = 0
        if options.firstFrameOnly { flags |= 1 }
        if options.preloadAllFrames { flags |= 2 }
        if options.appliesOrientation { flags |= 4 }
        if options.colorSpace == .original { flags |= 8 }
        if options.bitDepth == .source { flags |= 16 }
        if options.dynamicRange == .high { flags |= 32 }
        out.u32(flags)
        out.u32(cpuSeconds)
        out.i64(dataLength)
        return out.bytes
    }

    init(options: ImageDecodingOptions, cpuSeconds: UInt32, dataLength: Int) {
        self.options = options
        self.cpuSeconds = cpuSeconds
        self.dataLength = dataLength
    }

    /// The request in `bytes`, or nil when they are not one.
    init?(parsing bytes: some Collection<UInt8>) {
        var input = ByteReader(bytes)
        guard input.u32() == Self.magic, let maxSize = input.i64(), let maxCount = input.i64(), let fillWidth = input.i64(),
              let fillHeight = input.i64(), let pixelLimit = input.i64(), let scale = input.f64(), let page = input.i64(),
              let anchorX = input.f64(), let anchorY = input.f64(), let flags = input.u32(),
              let cpu = input.u32(), let length = input.i64(), input.isAtEnd, length >= 0, pixelLimit > 0, scale.isFinite, scale > 0, page >= 0
        else { return nil }
        options = ImageDecodingOptions(maxPixelSize: maxSize >= 0 ? maxSize : nil, maxPixelCount: maxCount >= 0 ? maxCount : nil,
                                       firstFrameOnly: flags & 1 != 0, preloadAllFrames: flags & 2 != 0,
                                       appliesOrientation: flags & 4 != 0, pixelLimit: pixelLimit, scale: scale,
                                       fillSize: fillWidth >= 0 && fillHeight >= 0 ? PixelSize(width: fillWidth, height: fillHeight) : nil,
                                       colorSpace: flags & 8 != 0 ? .original : .sRGB)
        options.pageIndex = page
        // An anchor's sides are both in 0...1, or both -1 for none.
        if anchorX == -1 && anchorY == -1 {
            options.fillAnchor = nil
        } else if (0...1).contains(anchorX) && (0...1).contains(anchorY) {
            options.fillAnchor = FillAnchor(x: anchorX, y: anchorY)
        } else {
            return nil
        }
        options.bitDepth = flags & 16 != 0 ? .source : .eight
        options.dynamicRange = flags & 32 != 0 ? .high : .standard
        cpuSeconds = cpu
        dataLength = length
    }
}

/// What a worker answers: the image's description, or the decoder's error. The pixels of a
/// decoded image are in the attached file, frame after frame, followed by the frames'
/// durations and the ICC profile (`Decoded.tail`): a message stays small whatever the image.
enum WorkerReply: Equatable {
    /// A decoded image: `frameCount` frames of `width` x `height` RGBA pixels (8 bits a
    /// channel, or 16 when `deep`).
    struct Decoded: Equatable {
        var width: Int
        var height: Int
        var durations: [Double]
        var loopCount: Int?
        var format: ImageFormat
        var exifOrientation: Int?
        var orientationApplied: Bool
        var premultiplied: Bool
        var colorInfo: ImageColorInfo
        var deep = false

        /// Bytes of pixels at the start of the attached file: every frame.
        var pixelBytes: Int { width * height * (deep ? 8 : 4) * durations.count }

        /// What follows the pixels in the attached file: the durations, then the profile.
        var tail: [UInt8] {
            var out = ByteWriter()
            for duration in durations { out.f64(duration) }
            out.append(colorInfo.iccProfile.map { [UInt8]($0) } ?? [])
            return out.bytes
        }
    }

    /// A decoded image as its message describes it, before the attached file is read.
    struct Header: Equatable {
        var width: Int
        var height: Int
        var frameCount: Int
        var profileLength: Int?
        var loopCount: Int?
        var format: ImageFormat
        var exifOrientation: Int?
        var orientationApplied: Bool
        var premultiplied: Bool
        var cicp: ImageColorInfo.CICP?
        var deep = false

        /// Bytes of pixels the attached file starts with.
        var pixelBytes: Int { width * height * (deep ? 8 : 4) * frameCount }
        /// Bytes the attached file must hold: the pixels and the tail.
        var fileBytes: Int { pixelBytes + frameCount * 8 + (profileLength ?? 0) }

        /// The image described, with the durations and profile read from `tail` (the bytes of
        /// the attached file after the pixels); nil when they are not what the header says.
        func decoded(tail: some Collection<UInt8>) -> Decoded? {
            var input = ByteReader(tail)
            var durations: [Double] = []
            durations.reserveCapacity(frameCount)
            for _ in 0..<frameCount {
                guard let duration = input.f64(), duration.isFinite, duration >= 0 else { return nil }
                durations.append(duration)
            }
            let profile = profileLength.flatMap { input.take($0) }
            guard profileLength == nil || profile != nil, input.isAtEnd else { return nil }
            return Decoded(width: width, height: height, durations: durations, loopCount: loopCount, format: format,
                           exifOrientation: exifOrientation, orientationApplied: orientationApplied, premultiplied: premultiplied,
                           colorInfo: ImageColorInfo(iccProfile: profile.map { Data($0) }, cicp: cicp), deep: deep)
        }
    }

    case decoded(Header)
    case failed(ImageError)

    static let magic: UInt32 = 0x5749_4452   // "WIDR"
    /// The most frames a reply may describe.
    static let maximumFrames = 100_000
    /// The longest ICC profile a reply may carry.
    static let maximumProfileBytes = 4 << 20
    /// The longest text (a format's name, an error's reason) a reply may carry.
    static let maximumTextBytes = 1024
    /// The longest reply message.
    static let maximumMessageBytes = 4096

    /// The message of a decoded image.
    static func message(_ image: Decoded) -> [UInt8] {
        var out = ByteWriter()
        out.u32(magic)
        out.u8(0)
        out.i64(image.width)
        out.i64(image.height)
        out.u32(UInt32(image.durations.count))
        out.i64(image.loopCount ?? -1)
        out.text(image.format.rawValue)
        out.i64(image.exifOrientation ?? -1)
        out.u8(image.orientationApplied ? 1 : 0)
        // Bit 0: premultiplied; bit 1: 16 bits a channel.
        out.u8((image.premultiplied ? 1 : 0) | (image.deep ? 2 : 0))
        out.i64(image.colorInfo.iccProfile?.count ?? -1)
        if let cicp = image.colorInfo.cicp {
            out.u8(1)
            out.i64(cicp.colorPrimaries)
            out.i64(cicp.transferCharacteristics)
            out.i64(cicp.matrixCoefficients)
            out.u8(cicp.fullRange ? 1 : 0)
        } else {
            out.u8(0)
        }
        return out.bytes
    }

    /// The message of a failed decode.
    static func message(_ error: ImageError) -> [UInt8] {
        var out = ByteWriter()
        out.u32(magic)
        out.u8(1)
        switch error {
        case .emptyData:
            out.u8(0)
        case .unsupportedFormat(let format):
            out.u8(1)
            out.text(format.rawValue)
        case .undecodable(let format, let reason):
            out.u8(2)
            out.text(format.rawValue)
            out.text(reason)
        case .tooLarge(let width, let height, let limit):
            out.u8(3)
            out.i64(width)
            out.i64(height)
            out.i64(limit)
        case .animationTooLarge(let width, let height, let frames, let limit):
            out.u8(4)
            out.i64(width)
            out.i64(height)
            out.i64(frames)
            out.i64(limit)
        default:
            out.u8(2)
            out.text(ImageFormat.unknown.rawValue)
            out.text(error.description)
        }
        return out.bytes
    }

    /// The reply in `bytes`, or nil when they are not a well-formed one.
    init?(parsing bytes: some Collection<UInt8>) {
        var input = ByteReader(bytes)
        guard input.u32() == Self.magic, let kind = input.u8() else { return nil }
        switch kind {
        case 0:
            guard let width = input.i64(), let height = input.i64(), (1...1 << 20).contains(width), (1...1 << 20).contains(height),
                  let frames = input.u32(), (1...UInt32(Self.maximumFrames)).contains(frames),
                  let loop = input.i64(), loop >= -1, let formatName = input.text(), let orientation = input.i64(),
                  (-1...0xFFFF).contains(orientation), let applied = input.u8(), applied <= 1,
                  let pixelFlags = input.u8(), pixelFlags <= 3,
                  let profileLength = input.i64(), (-1...Self.maximumProfileBytes).contains(profileLength),
                  let hasCICP = input.u8(), hasCICP <= 1 else { return nil }
            var cicp: ImageColorInfo.CICP?
            if hasCICP == 1 {
                guard let primaries = input.i64(), let transfer = input.i64(), let matrix = input.i64(), let range = input.u8(),
                      (0...255).contains(primaries), (0...255).contains(transfer), (0...255).contains(matrix), range <= 1 else { return nil }
                cicp = .init(colorPrimaries: primaries, transferCharacteristics: transfer, matrixCoefficients: matrix, fullRange: range == 1)
            }
            guard input.isAtEnd else { return nil }
            self = .decoded(Header(width: width, height: height, frameCount: Int(frames), profileLength: profileLength >= 0 ? profileLength : nil,
                                   loopCount: loop >= 0 ? loop : nil, format: ImageFormat(rawValue: formatName) ?? .unknown,
                                   exifOrientation: orientation >= 0 ? orientation : nil, orientationApplied: applied == 1,
                                   premultiplied: pixelFlags & 1 != 0, cicp: cicp, deep: pixelFlags & 2 != 0))
        case 1:
            guard let errorKind = input.u8() else { return nil }
            let error: ImageError
            switch errorKind {
            case 0: error = .emptyData
            case 1:
                guard let format = input.text() else { return nil }
                error = .unsupportedFormat(ImageFormat(rawValue: format) ?? .unknown)
            case 2:
                guard let format = input.text(), let reason = input.text() else { return nil }
                error = .undecodable(ImageFormat(rawValue: format) ?? .unknown, reason: reason)
            case 3:
                guard let width = input.i64(), let height = input.i64(), let limit = input.i64(), width >= 0, height >= 0, limit >= 0
                else { return nil }
                error = .tooLarge(width: width, height: height, limit: limit)
            case 4:
                guard let width = input.i64(), let height = input.i64(), let frames = input.i64(), let limit = input.i64(),
                      width >= 0, height >= 0, frames >= 0, limit >= 0 else { return nil }
                error = .animationTooLarge(width: width, height: height, frames: frames, limit: limit)
            default: return nil
            }
            guard input.isAtEnd else { return nil }
            self = .failed(error)
        default:
            return nil
        }
    }
}

/// Little-endian fields appended to a byte array.
struct ByteWriter {
    /// The message a worker sends once it is locked down and ready for requests.
    static let ready: [UInt8] = {
        var out = ByteWriter()
        out.u32(readyMagic)
        return out.bytes
    }()
    static let readyMagic: UInt32 = 0x5749_4459   // "WIDY"

    private(set) var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func i64(_ value: Int) { withUnsafeBytes(of: Int64(value).littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func f64(_ value: Double) { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func append(_ more: [UInt8]) { bytes.append(contentsOf: more) }
    /// UTF-8 text behind its 16-bit length, cut to `WorkerReply.maximumTextBytes`.
    mutating func text(_ value: String) {
        var utf8 = Array(value.utf8.prefix(WorkerReply.maximumTextBytes))
        while !utf8.isEmpty, String(validating: utf8, as: UTF8.self) == nil { utf8.removeLast() }
        bytes.append(UInt8(utf8.count & 0xFF))
        bytes.append(UInt8(utf8.count >> 8))
        bytes.append(contentsOf: utf8)
    }
}

/// Little-endian fields read from bytes; each read is nil past the end.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: some Collection<UInt8>) { self.bytes = Array(bytes) }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8() -> UInt8? { take(1)?.first }
    mutating func u32() -> UInt32? { take(4).map { $0.reversed().reduce(0) { $0 << 8 | UInt32($1) } } }
    mutating func u64() -> UInt64? { take(8).map { $0.reversed().reduce(0) { $0 << 8 | UInt64($1) } } }
    mutating func i64() -> Int? { u64().map { Int(Int64(bitPattern: $0)) } }
    mutating func f64() -> Double? { u64().map(Double.init(bitPattern:)) }
    mutating func text() -> String? {
        guard let low = u8(), let high = u8() else { return nil }
        let length = Int(high) << 8 | Int(low)
        guard length <= WorkerReply.maximumTextBytes, let utf8 = take(length) else { return nil }
        return String(validating: utf8, as: UTF8.self)
    }
}

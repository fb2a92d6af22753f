import Foundation

/// The EXIF tags photo services ask for, read as values from a file's EXIF block: how to turn
/// the pixels upright, when the photo was taken, with what camera and lens, how it was exposed,
/// and where (``gps``).
///
/// Read from IFD0, its EXIF sub-IFD (0x8769) and its GPS sub-IFD (0x8825). A stranger's EXIF is
/// untrusted input: every offset is checked against the block, each directory is read once (a
/// directory that points back at one already read is not followed), at most 1,000 entries a
/// directory and 64 KB a value are read, and a tag of an unexpected type is left nil.
public struct ExifProperties: Sendable, Equatable {
    /// Orientation (0x0112).
    public var orientation: ExifOrientation?
    /// The camera's maker (Make, 0x010F) and model (Model, 0x0110).
    public var make: String?
    /// The camera's model (0x0110).
    public var model: String?
    /// The software that wrote the file last (0x0131).
    public var software: String?
    /// The photographer (Artist, 0x013B).
    public var artist: String?
    /// The copyright notice (0x8298).
    public var copyright: String?
    /// When the file was last changed (DateTime, 0x0132), as EXIF writes dates:
    /// `YYYY:MM:DD HH:MM:SS`, in the camera's local time.
    public var dateTime: String?
    /// When the photo was taken (DateTimeOriginal, 0x9003), as EXIF writes it.
    public var dateTimeOriginal: String?
    /// When it was digitized (DateTimeDigitized, 0x9004), as EXIF writes it.
    public var dateTimeDigitized: String?
    /// The offset from UTC of `dateTimeOriginal` (OffsetTimeOriginal, 0x9011), e.g. `+02:00`.
    public var offsetTimeOriginal: String?
    /// The lens's maker (LensMake, 0xA433).
    public var lensMake: String?
    /// The lens's model (LensModel, 0xA434).
    public var lensModel: String?
    /// The exposure time in seconds (ExposureTime, 0x829A).
    public var exposureTime: Double?
    /// The f-number (FNumber, 0x829D).
    public var fNumber: Double?
    /// The ISO speed (PhotographicSensitivity, 0x8827).
    public var isoSpeed: Int?
    /// The focal length in millimetres (FocalLength, 0x920A).
    public var focalLength: Double?
    /// Where the photo was taken, when the GPS directory gives a latitude and a longitude.
    public var gps: GPSPosition?

    /// A position from EXIF's GPS directory, in decimal degrees (south and west negative).
    public struct GPSPosition: Sendable, Equatable {
        /// Degrees north of the equator (negative: south).
        public var latitude: Double
        /// Degrees east of Greenwich (negative: west).
        public var longitude: Double
        /// Metres above sea level (negative: below), when given.
        public var altitude: Double?

        /// A position.
        public init(latitude: Double, longitude: Double, altitude: Double? = nil) {
            self.latitude = latitude
            self.longitude = longitude
            self.altitude = altitude
        }
    }

    /// When the photo was taken, as a date: `dateTimeOriginal` in `offsetTimeOriginal`'s time
    /// zone. Nil without either, or when one is malformed (EXIF's local time without an offset
    /// names no instant).
    public var captureDate: Date? {
        guard let text = dateTimeOriginal, let offset = offsetTimeOriginal else { return nil }
        let digits = Array(text.utf8), zone = Array(offset.utf8)
        func number(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard digits.count >= 19, zone.count == 6, zone[0] == 0x2B || zone[0] == 0x2D,
              let year = number(digits, 0..<4), let month = number(digits, 5..<7), let day = number(digits, 8..<10),
              let hour = number(digits, 11..<13), let minute = number(digits, 14..<16), let second = number(digits, 17..<19),
              let zoneHours = number(zone, 1..<3), let zoneMinutes = number(zone, 4..<6) else { return nil }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60,
              zoneHours <= 14, zoneMinutes < 60 else { return nil }
        let sign = zone[0] == 0x2D ? -1 : 1
        guard let timeZone = TimeZone(secondsFromGMT: sign * (zoneHours * 3600 + zoneMinutes * 60)) else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        components.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date
    }

    /// No tags.
    public init() {}

    /// The tags of `tiff`, a TIFF-structured EXIF block (an `Exif\0\0` prefix is skipped; a
    /// whole TIFF file is one too); nil when it has no TIFF header or none of these tags.
    public init?(tiff: some Collection<UInt8>) {
        guard let reader = TIFFReader(tiff), let ifd0 = reader.u32(4) else { return nil }
        var directories = ExifDirectories(reader: reader)
        var exifIFD: Int?, gpsIFD: Int?
        directories.read(at: ifd0) { tag, value in
            switch tag {
            case 0x0112: orientation = value.integer.flatMap(ExifOrientation.init(rawValue:))
            case 0x010F: make = value.text
            case 0x0110: model = value.text
            case 0x0131: software = value.text
            case 0x013B: artist = value.text
            case 0x8298: copyright = value.text
            case 0x0132: dateTime = value.text
            case 0x8769: exifIFD = value.integer
            case 0x8825: gpsIFD = value.integer
            default: break
            }
        }
        if let exifIFD {
            directories.read(at: exifIFD) { tag, value in
                switch tag {
                case 0x9003: dateTimeOriginal = value.text
                case 0x9004: dateTimeDigitized = value.text
                case 0x9011: offsetTimeOriginal = value.text
                case 0xA433: lensMake = value.text
                case 0xA434: lensModel = value.text
                case 0x829A: exposureTime = value.rational(0)
                case 0x829D: fNumber = value.rational(0)
                case 0x8827: isoSpeed = value.integer
                case 0x920A: focalLength = value.rational(0)
                default: break
                }
            }
        }
        if let gpsIFD {
            var latitude: Double?, longitude: Double?, altitude: Double?
            var south = false, west = false, belowSeaLevel = false
            directories.read(at: gpsIFD) { tag, value in
                switch tag {
                case 1: south = value.text == "S"
                case 2: latitude = value.degrees
                case 3: west = value.text == "W"
                case 4: longitude = value.degrees
                case 5: belowSeaLevel = value.integer == 1
                case 6: altitude = value.rational(0)
                default: break
                }
            }
            if let latitude, let longitude {
                gps = GPSPosition(latitude: south ? -latitude : latitude, longitude: west ? -longitude : longitude,
                                  altitude: altitude.map { belowSeaLevel ? -$0 : $0 })
            }
        }
        guard self != ExifProperties() else { return nil }
    }
}

extension ExifProperties {
    /// `tiff` (an EXIF block) with IFD0's orientation tag set to 1 (up), for pixels already
    /// turned upright; unchanged when it has no such tag of type SHORT.
    static func withOrientationUp(_ tiff: [UInt8]) -> [UInt8] {
        guard let reader = TIFFReader(tiff), let entries = reader.firstDirectoryEntries else { return tiff }
        var out = reader.bytes
        for entry in entries where reader.u16(entry) == 0x0112 && reader.u16(entry + 2) == 3 && entry + 10 <= out.count {
            (out[entry + 8], out[entry + 9]) = reader.littleEndian ? (1, 0) : (0, 1)
        }
        return out
    }
}

/// The directories of one EXIF block (or TIFF file), each read at most once.
struct ExifDirectories {
    let reader: TIFFReader
    private var visited: Set<Int> = []

    static let maximumEntries = 1000
    static let maximumValueBytes = 1 << 16

    init(reader: TIFFReader) { self.reader = reader }

    /// Calls `body` with each entry of the directory at `offset`, unless it was read already or
    /// lies outside the block.
    mutating func read(at offset: Int, _ body: (Int, ExifValue) -> Void) {
        guard visited.insert(offset).inserted, let count = reader.u16(offset), count <= Self.maximumEntries else { return }
        for index in 0..<count {
            let entry = offset + 2 + index * 12
            guard let tag = reader.u16(entry), let type = reader.u16(entry + 2), let count = reader.u32(entry + 4) else { return }
            guard let size = ExifValue.size(of: type), count > 0 else { continue }
            let (bytes, overflow) = size.multipliedReportingOverflow(by: count)
            guard !overflow, bytes <= Self.maximumValueBytes else { continue }
            let start = bytes <= 4 ? entry + 8 : (reader.u32(entry + 8) ?? -1)
            guard start >= 0, start + bytes <= reader.bytes.count else { continue }
            body(tag, ExifValue(reader: reader, type: type, count: count, start: start))
        }
    }
}

/// One entry's value, read as the type the tag expects.
struct ExifValue {
    let reader: TIFFReader
    let type: Int
    let count: Int
    let start: Int

    /// The bytes of one element of `type` (nil: a type not read here).
    static func size(of type: Int) -> Int? {
        switch type {
        case 1, 2, 6, 7: 1        // BYTE, ASCII, SBYTE, UNDEFINED
        case 3, 8: 2              // SHORT, SSHORT
        case 4, 9, 13: 4          // LONG, SLONG, IFD (a sub-directory's offset)
        case 5, 10: 8             // RATIONAL, SRATIONAL
        default: nil
        }
    }

    /// The value's bytes, as stored.
    var bytes: Data { Data(reader.bytes[start..<(start + count * (Self.size(of: type) ?? 1))]) }

    /// An ASCII value up to its first NUL, without trailing spaces (nil when empty).
    var text: String? {
        guard type == 2 || type == 7 else { return nil }
        var bytes = reader.bytes[start..<(start + count)].prefix { $0 != 0 }
        while let last = bytes.last, last == 0x20 { bytes.removeLast() }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// The first element of a BYTE, SHORT or LONG value.
    var integer: Int? {
        switch type {
        case 1: Int(reader.bytes[start])
        case 3: reader.u16(start)
        case 4, 13: reader.u32(start)
        default: nil
        }
    }

    /// Element `index` of a RATIONAL value (nil for a zero denominator; the tags read here are
    /// unsigned).
    func rational(_ index: Int) -> Double? {
        guard type == 5, index < count, let numerator = reader.u32(start + index * 8),
              let denominator = reader.u32(start + index * 8 + 4), denominator != 0 else { return nil }
        return Double(numerator) / Double(denominator)
    }

    /// Degrees, minutes and seconds (three rationals) as decimal degrees.
    var degrees: Double? {
        guard count >= 3, let d = rational(0), let m = rational(1), let s = rational(2) else { return nil }
        return d + m / 60 + s / 3600
    }
}

import ArgumentParser
import WebImage

/// `--color-space srgb|original` on the commands that decode files.
extension ImageColorSpace: ExpressibleByArgument {
    /// `srgb` or `original`.
    public init?(argument: String) { self.init(rawValue: argument.lowercased()) }

    /// The values the help lists.
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// `--depth 8|source` (16 meaning source) on `webimage convert`.
extension ImageBitDepth: ExpressibleByArgument {
    /// `8`, or `source` (also `16`).
    public init?(argument: String) {
        switch argument.lowercased() {
        case "8": self = .eight
        case "source", "16": self = .source
        default: return nil
        }
    }

    /// The values the help lists.
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// `--dynamic-range standard|high` on `webimage convert`.
extension ImageDynamicRange: ExpressibleByArgument {
    /// `standard` (also `sdr`) or `high` (also `hdr`).
    public init?(argument: String) {
        switch argument.lowercased() {
        case "standard", "sdr": self = .standard
        case "high", "hdr": self = .high
        default: return nil
        }
    }

    /// The values the help lists.
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

import ArgumentParser
import WebImage

/// `--color-space srgb|original` on the commands that decode files.
extension ImageColorSpace: ExpressibleByArgument {
    /// `srgb` or `original`.
    public init?(argument: String) { self.init(rawValue: argument.lowercased()) }

    /// The values the help lists.
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

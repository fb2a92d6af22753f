/// An RGBA colour, each channel 0...1, straight alpha.
public struct Color: Sendable, Hashable {
    /// Red, 0 to 1.
    public var red: Double
    /// Green, 0 to 1.
    public var green: Double
    /// Blue, 0 to 1.
    public var blue: Double
    /// Opacity, 0 (clear) to 1 (opaque).
    public var alpha: Double

    /// A colour from channels in 0...1 (clamped).
    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        func clamp(_ v: Double) -> Double { v.isFinite ? min(1, max(0, v)) : 0 }
        self.red = clamp(red)
        self.green = clamp(green)
        self.blue = clamp(blue)
        self.alpha = clamp(alpha)
    }

    /// Opaque black.
    public static let black = Color(red: 0, green: 0, blue: 0)
    /// Opaque white.
    public static let white = Color(red: 1, green: 1, blue: 1)
    /// Fully transparent.
    public static let clear = Color(red: 0, green: 0, blue: 0, alpha: 0)

    /// `#aarrggbb`, lowercase, as SDWebImage writes colours into transformer keys.
    public var hexString: String {
        func byte(_ v: Double) -> UInt8 { UInt8((v * 255).rounded()) }
        return "#" + [byte(alpha), byte(red), byte(green), byte(blue)].lowercaseHex
    }

    /// Channels as 0...255 floats, premultiplied by alpha.
    var premultiplied: SIMD4<Float> {
        SIMD4<Float>(Float(red * alpha), Float(green * alpha), Float(blue * alpha), Float(alpha)) * 255
    }
}

/// Rounds corners with anti-aliased edges, optionally drawing a border (SDWebImage's
/// `SDImageRoundCornerTransformer`). A radius over half the shorter side is clamped to it.
public struct RoundCornerTransformer: BitmapTransformer {
    /// Which corners to round (raw values as SDWebImage's `SDRectCorner`).
    public struct Corners: OptionSet, Sendable, Hashable {
        /// The corner bits.
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// The top-left corner.
        public static let topLeft = Corners(rawValue: 1)
        /// The top-right corner.
        public static let topRight = Corners(rawValue: 2)
        /// The bottom-left corner.
        public static let bottomLeft = Corners(rawValue: 4)
        /// The bottom-right corner.
        public static let bottomRight = Corners(rawValue: 8)
        /// Every corner.
        public static let all: Corners = [.topLeft, .topRight, .bottomLeft, .bottomRight]
    }

    /// The corner radius in pixels.
    public let radius: Double
    /// Which corners are rounded.
    public let corners: Corners
    /// The border width in pixels (0 for none).
    public let borderWidth: Double
    /// The border colour.
    public let borderColor: Color?

    /// Round `corners` by `radius` pixels, with a border of `borderWidth` pixels in `borderColor`.
    public init(radius: Double, corners: Corners = .all, borderWidth: Double = 0, borderColor: Color? = nil) {
        self.radius = radius
        self.corners = corners
        self.borderWidth = borderWidth
        self.borderColor = borderColor
    }

    public var key: String {
        "RoundCornerTransformer(\(KeyFormat.number(radius)),\(corners.rawValue),\(KeyFormat.number(borderWidth)),\(borderColor?.hexString ?? "(null)"))"
    }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        try TransformCheck.finite(radius, "radius")
        try TransformCheck.finite(borderWidth, "border width")
        guard radius >= 0, borderWidth >= 0 else { throw ImageError.transformFailed("radius and border width must not be negative") }
        let w = bitmap.width, h = bitmap.height
        let r = min(radius, Double(min(w, h)) / 2)
        let border = min(borderWidth, Double(min(w, h)) / 2)
        let borderPremultiplied = (borderColor ?? .clear).premultiplied
        let corners = self.corners
        var out = bitmap
        out.withUnsafeMutableBytes { raw in
            let p = raw.bindMemory(to: SIMD4<UInt8>.self)
            Parallel.rows(h, grain: max(1, 65_536 / w)) { rows in
                for y in rows {
                    for x in 0..<w {
                        let shape = RoundCornerTransformer.coverage(x, y, w, h, inset: 0, radius: r, corners: corners)
                        if shape >= 1 && border <= 0 { continue }
                        let inner = border > 0
                            ? RoundCornerTransformer.coverage(x, y, w, h, inset: border, radius: max(0, r - border), corners: corners) : shape
                        let pixel = PixelMath.premultiplied(p[y * w + x])
                        // Image inside the inner shape, border colour between inner and outer shapes.
                        let ring = max(0, shape - inner)
                        let blended = pixel * inner + borderPremultiplied * ring
                        p[y * w + x] = PixelMath.unpremultiplied(blended)
                    }
                }
            }
        }
        return out
    }

    /// How much of pixel (x, y) lies inside the rounded rectangle inset by `inset`, 0...1.
    static func coverage(_ x: Int, _ y: Int, _ w: Int, _ h: Int, inset: Double, radius: Double, corners: Corners) -> Float {
        let px = Double(x) + 0.5, py = Double(y) + 0.5
        let left = inset, top = inset, right = Double(w) - inset, bottom = Double(h) - inset
        // Distance inside the straight edges, for the 1-pixel anti-aliased boundary.
        let edge = min(px - left, right - px, py - top, bottom - py) + 0.5
        var value = min(1, max(0, edge))
        guard radius > 0 else { return Float(value) }
        let centres: [(Corners, Double, Double, Bool)] = [
            (.topLeft, left + radius, top + radius, px < left + radius && py < top + radius),
            (.topRight, right - radius, top + radius, px > right - radius && py < top + radius),
            (.bottomLeft, left + radius, bottom - radius, px < left + radius && py > bottom - radius),
            (.bottomRight, right - radius, bottom - radius, px > right - radius && py > bottom - radius),
        ]
        for (corner, cx, cy, inCorner) in centres where inCorner && corners.contains(corner) {
            let distance = ((px - cx) * (px - cx) + (py - cy) * (py - cy)).squareRoot()
            value = min(value, min(1, max(0, radius - distance + 0.5)))
        }
        return Float(value)
    }
}

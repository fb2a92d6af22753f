/// Mirrors horizontally and/or vertically (SDWebImage's `SDImageFlippingTransformer`): exact pixel moves.
public struct FlippingTransformer: BitmapTransformer {
    /// Mirror left to right.
    public let horizontal: Bool
    /// Mirror top to bottom.
    public let vertical: Bool

    /// Flip left-right (`horizontal`) and/or top-bottom (`vertical`).
    public init(horizontal: Bool, vertical: Bool) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    public var key: String { "FlippingTransformer(\(horizontal ? 1 : 0),\(vertical ? 1 : 0))" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        switch (horizontal, vertical) {
        case (false, false): bitmap
        case (true, false): bitmap.oriented(.upMirrored)
        case (false, true): bitmap.oriented(.downMirrored)
        case (true, true): bitmap.oriented(.down)
        }
    }
}

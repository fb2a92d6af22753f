import Foundation

/// Rotates by an angle in radians, counterclockwise (SDWebImage's `SDImageRotationTransformer`).
/// With `fitSize` the canvas grows to hold the whole rotated image, else it keeps the original
/// size; uncovered pixels are transparent. Multiples of 90 degrees are exact pixel moves; other
/// angles are sampled bilinearly in premultiplied alpha.
public struct RotationTransformer: BitmapTransformer {
    /// The angle in radians, counter-clockwise.
    public let angle: Double
    /// Grow the canvas to hold the whole rotated image (else keep the size and clip).
    public let fitSize: Bool

    /// Rotate by `angle` radians counterclockwise.
    public init(angle: Double, fitSize: Bool = true) {
        self.angle = angle
        self.fitSize = fitSize
    }

    public var key: String { "RotationTransformer(\(KeyFormat.number(angle)),\(fitSize ? 1 : 0))" }

    public func transform(_ bitmap: Bitmap) throws -> Bitmap {
        try TransformCheck.finite(angle, "angle")
        let quarterTurns = angle / (Double.pi / 2)
        if abs(quarterTurns - quarterTurns.rounded()) < 1e-9 {
            let turns = ((Int(quarterTurns.rounded()) % 4) + 4) % 4
            let turned: Bitmap
            switch turns {
            case 1: turned = bitmap.oriented(.left)       // 90 degrees counterclockwise
            case 2: turned = bitmap.oriented(.down)
            case 3: turned = bitmap.oriented(.right)
            default: turned = bitmap
            }
            guard !fitSize, turned.width != bitmap.width else { return turned }
            var canvas = Bitmap(width: bitmap.width, height: bitmap.height)
            canvas.paste(turned, atX: (bitmap.width - turned.width) / 2, y: (bitmap.height - turned.height) / 2)
            return canvas
        }
        let w = Double(bitmap.width), h = Double(bitmap.height)
        let c = cos(angle), s = sin(angle)
        let ow = fitSize ? max(1, Int((abs(w * c) + abs(h * s)).rounded(.up) - 1e-6)) : bitmap.width
        let oh = fitSize ? max(1, Int((abs(w * s) + abs(h * c)).rounded(.up) - 1e-6)) : bitmap.height
        guard ow * oh <= ImageDecodingOptions.defaultPixelLimit else { throw ImageError.transformFailed("the rotated image is too large") }
        let source = PixelBuffer(bitmap)
        let storage = PixelStorage(uninitializedCount: ow * oh * 4)
        let dst = UnsafeMutableRawPointer(storage.pointer).bindMemory(to: SIMD4<UInt8>.self, capacity: ow * oh)
        let (cx, cy, ocx, ocy) = (w / 2, h / 2, Double(ow) / 2, Double(oh) / 2)
        let sw = bitmap.width, sh = bitmap.height
        source.pixels.withUnsafeBufferPointer { pixels in
            @inline(__always) func at(_ x: Int, _ y: Int) -> SIMD4<Float> {
                (x >= 0 && y >= 0 && x < sw && y < sh) ? pixels[y * sw + x] : .zero
            }
            Parallel.rows(oh, grain: max(1, 65_536 / ow)) { rows in
                for oy in rows {
                    let dy = Double(oy) + 0.5 - ocy
                    for ox in 0..<ow {
                        let dx = Double(ox) + 0.5 - ocx
                        // Inverse of a counterclockwise turn (y pointing down).
                        let sx = dx * c - dy * s + cx - 0.5, sy = dx * s + dy * c + cy - 0.5
                        let x0 = Int(sx.rounded(.down)), y0 = Int(sy.rounded(.down))
                        let fx = Float(sx - Double(x0)), fy = Float(sy - Double(y0))
                        if x0 < -1 || y0 < -1 || x0 >= sw || y0 >= sh {
                            dst[oy * ow + ox] = .zero
                            continue
                        }
                        let top = at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx
                        let bottom = at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx
                        dst[oy * ow + ox] = PixelMath.unpremultiplied(top * (1 - fy) + bottom * fy)
                    }
                }
            }
        }
        return Bitmap(width: ow, height: oh, storage: storage)
    }
}

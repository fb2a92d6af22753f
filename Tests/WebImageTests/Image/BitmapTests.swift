import Foundation
import Testing
@testable import WebImage

@Suite struct BitmapTests {
    /// A 3x2 bitmap whose pixel (x, y) has red = 10 * x + y.
    static let numbered = Bitmap(width: 3, height: 2, rgba: (0..<2).flatMap { y in (0..<3).flatMap { x in [UInt8(10 * x + y), 0, 0, 255] } })

    @Test func copyOnWrite() {
        let original = Self.numbered
        var copy = original
        copy.withUnsafeMutableBytes { $0[0] = 99 }
        #expect(original[0, 0].r == 0)
        #expect(copy[0, 0].r == 99)
    }

    @Test(arguments: ExifOrientation.allCases)
    func orientationMovesPixelsExactly(orientation: ExifOrientation) {
        let turned = Self.numbered.oriented(orientation)
        // Where stored pixel (sx, sy) of a 3x2 image lands when displayed upright.
        let expected: [ExifOrientation: [[UInt8]]] = [
            .up: [[0, 10, 20], [1, 11, 21]],
            .upMirrored: [[20, 10, 0], [21, 11, 1]],
            .down: [[21, 11, 1], [20, 10, 0]],
            .downMirrored: [[1, 11, 21], [0, 10, 20]],
            .leftMirrored: [[0, 1], [10, 11], [20, 21]],
            .right: [[1, 0], [11, 10], [21, 20]],
            .rightMirrored: [[21, 20], [11, 10], [1, 0]],
            .left: [[20, 21], [10, 11], [0, 1]],
        ]
        let rows = expected[orientation]!
        #expect(turned.height == rows.count && turned.width == rows[0].count)
        for (y, row) in rows.enumerated() { for (x, value) in row.enumerated() { #expect(turned[x, y].r == value, "\(orientation) at \(x),\(y)") } }
    }

    @Test func areaDownscaleAveragesAndKeepsEdgesFreeOfDarkFringes() {
        // Left half opaque white, right half fully transparent black: averaging in premultiplied
        // alpha keeps the colour white where anything is visible.
        var bytes = [UInt8]()
        for _ in 0..<4 { bytes += [255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0] }
        let bitmap = Bitmap(width: 4, height: 4, rgba: bytes)
        let small = bitmap.areaDownscaled(toWidth: 1, height: 1)
        #expect(small[0, 0] == (255, 255, 255, 128))
        let third = Fixtures.gradient(width: 9, height: 9, opaque: true).areaDownscaled(toWidth: 3, height: 3)
        #expect(third.width == 3 && third.height == 3)
    }

    @Test func areaAveragingOfOpaqueAndTranslucentPixelsIsTheMeanOfEachBlock() {
        // Halving: each output pixel is the mean of a 2x2 block, whichever path the bitmap takes.
        for opaque in [true, false] {
            let source = Fixtures.gradient(width: 64, height: 48, opaque: opaque)
            #expect(source.isFullyOpaque == opaque)
            let half = source.areaDownscaled(toWidth: 32, height: 24)
            var worst = 0
            for y in 0..<24 {
                for x in 0..<32 {
                    let block = [source[2 * x, 2 * y], source[2 * x + 1, 2 * y], source[2 * x, 2 * y + 1], source[2 * x + 1, 2 * y + 1]]
                    let alpha = block.map { Double($0.a) }.reduce(0, +)
                    let pixel = half[x, y]
                    // Premultiplied mean, back to straight alpha.
                    func channel(_ value: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> [Double] { [Double(value.r), Double(value.g), Double(value.b)] }
                    for c in 0..<3 where alpha > 0 {
                        let expected = block.map { channel($0)[c] * Double($0.a) }.reduce(0, +) / alpha
                        worst = max(worst, abs(Int(channel(pixel)[c]) - Int(expected.rounded())))
                    }
                    worst = max(worst, abs(Int(pixel.a) - Int((alpha / 4).rounded())))
                }
            }
            #expect(worst <= 1, "opaque: \(opaque)")
        }
    }
}

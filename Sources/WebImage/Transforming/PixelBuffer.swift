import Dispatch
import Foundation

/// Premultiplied RGBA pixels as SIMD4<Float> (0...255), the working form of the resampling
/// transformers: premultiplying keeps transparent neighbours from darkening edges.
struct PixelBuffer {
    let width: Int
    let height: Int
    var pixels: [SIMD4<Float>]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [SIMD4<Float>](repeating: .zero, count: width * height)
    }

    /// The bitmap premultiplied.
    init(_ bitmap: Bitmap) {
        width = bitmap.width
        height = bitmap.height
        pixels = [SIMD4<Float>](unsafeUninitializedCapacity: bitmap.width * bitmap.height) { buffer, count in
            bitmap.withUnsafeBytes { raw in
                let src = raw.bindMemory(to: SIMD4<UInt8>.self)
                let out = buffer.baseAddress!
                let n = src.count
                Parallel.rows(n, grain: 65_536) { range in
                    for i in range { out[i] = PixelMath.premultiplied(src[i]) }
                }
            }
            count = bitmap.width * bitmap.height
        }
    }

    /// Back to straight-alpha RGBA8 (rounded, clamped).
    func bitmap() -> Bitmap {
        let storage = PixelStorage(uninitializedCount: width * height * 4)
        let out = UnsafeMutableRawPointer(storage.pointer).bindMemory(to: SIMD4<UInt8>.self, capacity: width * height)
        pixels.withUnsafeBufferPointer { src in
            Parallel.rows(src.count, grain: 65_536) { range in
                for i in range { out[i] = PixelMath.unpremultiplied(src[i]) }
            }
        }
        return Bitmap(width: width, height: height, storage: storage)
    }
}

/// Fast lane-by-lane conversions (the generic SIMD integer/float initialisers are not specialised).
enum PixelMath {
    @inline(__always)
    static func float(_ p: SIMD4<UInt8>) -> SIMD4<Float> { SIMD4(Float(p.x), Float(p.y), Float(p.z), Float(p.w)) }

    /// A straight RGBA8 pixel premultiplied, 0...255 floats.
    @inline(__always)
    static func premultiplied(_ p: SIMD4<UInt8>) -> SIMD4<Float> {
        let a = Float(p.w)
        let k = a * (1 / 255)
        return SIMD4(Float(p.x) * k, Float(p.y) * k, Float(p.z) * k, a)
    }

    /// A premultiplied 0...255 pixel as straight RGBA8 (rounded, clamped).
    @inline(__always)
    static func unpremultiplied(_ p: SIMD4<Float>) -> SIMD4<UInt8> {
        let a = min(255, max(0, p.w))
        if a < 0.5 { return .zero }
        let k = 255 / a
        @inline(__always) func byte(_ v: Float) -> UInt8 { UInt8(min(255, max(0, v + 0.5))) }
        return SIMD4(byte(p.x * k), byte(p.y * k), byte(p.z * k), byte(a))
    }
}

extension Bitmap {
    /// Rewrites every pixel in place with `body` (RGBA8, straight alpha), across the cores for
    /// large bitmaps.
    @inline(__always)
    mutating func updatePixels(_ body: (inout SIMD4<UInt8>) -> Void) {
        withUnsafeMutableBytes { raw in
            let pixels = raw.bindMemory(to: SIMD4<UInt8>.self)
            Parallel.rows(pixels.count, grain: 262_144) { range in
                for i in range { body(&pixels[i]) }
            }
        }
    }
}

/// Bounded parallelism for pixel loops: at most one chunk per core, none for small work.
enum Parallel {
    static let cores = max(1, min(8, ProcessInfo.processInfo.activeProcessorCount))

    /// Calls `body` on disjoint ranges covering `0..<count`, on up to `cores` threads when the
    /// work is at least `grain` items per chunk.
    static func rows(_ count: Int, grain: Int, _ body: (Range<Int>) -> Void) {
        let chunks = min(cores, max(1, count / max(1, grain)))
        if chunks <= 1 {
            body(0..<count)
            return
        }
        let size = (count + chunks - 1) / chunks
        withoutActuallyEscaping(body) { body in
            // Safe to share: concurrentPerform returns only after every chunk ran, and callers
            // write disjoint ranges of their output for disjoint input ranges.
            nonisolated(unsafe) let body = body
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let start = chunk * size
                let end = min(count, start + size)
                if start < end { body(start..<end) }
            }
        }
    }
}

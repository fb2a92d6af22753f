import Synchronization

/// Renders full-canvas frames of an animation one at a time (a codec's compositor).
/// Calls are serialised by `LazyFrames`; implementations need not be thread-safe.
package protocol FrameRenderer: AnyObject {
    /// The composited canvas of frame `index`, as stored (before orientation or scaling).
    func render(_ index: Int) throws -> Bitmap
}

/// Frames decoded on demand, with the post-processing the decode options asked for.
package final class LazyFrames: Sendable {
    let durations: [Double]
    /// Bytes of decoded pixels the renderer keeps besides its canvas (a transformed
    /// animation's source image), counted in the image's `memoryCost`.
    let retainedCost: Int
    private let renderer: Mutex<any FrameRenderer>
    private let finish: @Sendable (Bitmap) -> Bitmap

    init(renderer: sending any FrameRenderer, durations: [Double], retainedCost: Int = 0,
         finish: @escaping @Sendable (Bitmap) -> Bitmap) {
        self.renderer = Mutex(renderer)
        self.durations = durations
        self.retainedCost = retainedCost
        self.finish = finish
    }

    func bitmap(at index: Int) throws -> Bitmap {
        let raw = try renderer.withLock { try $0.render(index) }
        return finish(raw)
    }
}

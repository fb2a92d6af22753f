/// One frame of an image: its pixels and how long it stays on screen.
public struct ImageFrame: Sendable, Equatable {
    /// The frame's pixels, composited onto the full canvas.
    public var bitmap: Bitmap
    /// Display time in seconds (0 for still images).
    public var duration: Double

    /// A frame from its pixels and display time in seconds.
    public init(bitmap: Bitmap, duration: Double = 0) {
        self.bitmap = bitmap
        self.duration = duration
    }
}

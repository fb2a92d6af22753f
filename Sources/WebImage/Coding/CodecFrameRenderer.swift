import CWebImageCodecs

/// A C decoder's handle that renders an animation's frames (GIF, animated WebP, AVIF, JPEG XL):
/// the shim's render function gives frame `index` as a `wi_image`, and its close function frees
/// the handle when the frames are let go. Frames are asked for in order; each codec's shim
/// decides how it goes back (restart, nearest keyframe, rewind).
package final class CodecFrameRenderer: FrameRenderer {
    /// The shim's function that renders a frame into `out`, returning `WI_OK` or an error status.
    package typealias Render = (OpaquePointer, UInt32, UnsafeMutablePointer<wi_image>) -> Int32

    /// The shim's handle, for the codec's own queries beside the frames (a colour profile).
    package let handle: OpaquePointer
    private let format: ImageFormat
    private let renderFrame: Render
    private let close: (OpaquePointer) -> Void

    /// Takes `handle`, whose frames of `format` `render` gives and `close` frees.
    package init(handle: OpaquePointer, format: ImageFormat, render: @escaping Render, close: @escaping (OpaquePointer) -> Void) {
        self.handle = handle
        self.format = format
        renderFrame = render
        self.close = close
    }

    deinit { close(handle) }

    package func render(_ index: Int) throws -> Bitmap {
        var out = wi_image()
        let status = renderFrame(handle, UInt32(index), &out)
        guard status == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else {
            let message = CodecBridge.message(out.message)
            throw CodecBridge.error(status, format: format, message: message.isEmpty ? "frame \(index) could not be rendered" : message,
                                    limit: ImageDecodingOptions.defaultPixelLimit)
        }
        return bitmap
    }
}

import Foundation

/// What a result may cost, checked from its size before any of its buffers exists.
struct ResultLimits: Sendable {
    /// The largest width or height of a result.
    let maximumDimension: Int
    /// The most pixels of a result, every frame counted.
    let maximumPixels: Int
    /// The most frames of an animated result.
    let maximumFrames: Int
    /// The largest source canvas decoded, in pixels (read from its header first).
    let maximumSourcePixels: Int

    /// The refusal of a `width` x `height` result of `frames` frames, or nil when it may be made.
    func refusal(width: Int, height: Int, frames: Int) -> ProcessingRequestError? {
        if frames > maximumFrames {
            return ProcessingRequestError(422, "the source has \(frames) frames, more than \(maximumFrames)")
        }
        if width > maximumDimension || height > maximumDimension {
            return ProcessingRequestError(422, "the result would be \(width)x\(height), larger than \(maximumDimension) pixels on a side")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        let (all, overflowAll) = pixels.multipliedReportingOverflow(by: max(1, frames))
        if overflow || overflowAll || all > maximumPixels {
            return ProcessingRequestError(422, "the result would be \(frames) frame(s) of \(width)x\(height), more than \(maximumPixels) pixels in all")
        }
        return nil
    }

    /// The bytes a result of `width` x `height` holds while it is made: the source frame, the
    /// transformed frame and the encoder's working copy, four bytes a pixel.
    static func workingBytes(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int) -> Int {
        4 * (sourceWidth * sourceHeight + 2 * width * height)
    }
}

import Foundation

extension ProcessingRequest {
    /// Whether the request resizes (else its result is the source's size, or the rotation's box
    /// of it).
    var resizesSource: Bool { pixelBox.width > 0 || pixelBox.height > 0 }

    /// The size of this request's result for a source decoded at `width` x `height`, computed
    /// from the transformers' geometry in their order, before any of them runs: the resize, then
    /// the rotation's bounding box (rounded up); the other operations keep the size.
    func resultSize(width: Int, height: Int, resizeByDecoding: Bool) -> (width: Int, height: Int) {
        var w = Double(width), h = Double(height)
        let box = pixelBox
        if !resizeByDecoding, box.width > 0 || box.height > 0 {
            let boxW = box.width > 0 ? Double(box.width) : .infinity, boxH = box.height > 0 ? Double(box.height) : .infinity
            switch mode {
            case .exact:
                (w, h) = (Double(box.width), Double(box.height))
            case .fit:
                let scale = min(boxW / w, boxH / h, 1)
                if scale < 1 { (w, h) = (max(1, (w * scale).rounded()), max(1, (h * scale).rounded())) }
            case .fill, .fillCrop:
                let scale = min(max(box.width > 0 ? boxW / w : 0, box.height > 0 ? boxH / h : 0), 1)
                if scale < 1 { (w, h) = (max(1, (w * scale).rounded()), max(1, (h * scale).rounded())) }
                if mode == .fillCrop, box.width > 0, box.height > 0 { (w, h) = (min(w, boxW), min(h, boxH)) }
            }
        }
        if let rotation, rotation.truncatingRemainder(dividingBy: 360) != 0 {
            let quarterTurns = rotation / 90
            if abs(quarterTurns - quarterTurns.rounded()) < 1e-9 {
                if Int(quarterTurns.rounded()) % 2 != 0 { (w, h) = (h, w) }
            } else {
                let angle = rotation * .pi / 180, c = abs(cos(angle)), s = abs(sin(angle))
                (w, h) = ((w * c + h * s).rounded(.up), (w * s + h * c).rounded(.up))
            }
        }
        return (Int(w), Int(h))
    }
}

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

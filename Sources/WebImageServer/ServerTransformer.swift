import Foundation
import WebImage

/// The resize of a request (fit, fill, fill-crop, exact, with gravity for the crop), never
/// enlarging except for `exact`; the other operations follow as the library's transformers.
struct ServerResizeTransformer: BitmapTransformer {
    let mode: ProcessingRequest.ResizeMode
    /// The box in pixels (0: that side is free).
    let width: Int
    let height: Int
    let gravity: ProcessingRequest.Gravity

    var key: String {
        let anchor = switch gravity {
        case .anchor(let x, let y): "a\(x),\(y)"
        case .focalPoint(let x, let y): "f\(x),\(y)"
        }
        return "ServerResize(\(mode.rawValue),\(width),\(height),\(anchor))"
    }

    func transform(_ bitmap: Bitmap) throws -> Bitmap {
        let w = Double(bitmap.width), h = Double(bitmap.height)
        let boxW = width > 0 ? Double(width) : .infinity, boxH = height > 0 ? Double(height) : .infinity
        guard width > 0 || height > 0 else { return bitmap }
        switch mode {
        case .exact:
            return try ResizingTransformer(width: Double(width), height: Double(height), scaleMode: .fill).transform(bitmap)
        case .fit:
            let scale = min(boxW / w, boxH / h, 1)
            guard scale < 1 else { return bitmap }
            return try resized(bitmap, scale)
        case .fill, .fillCrop:
            // Covering the box: the larger scale, never above 1 (a free side does not count).
            let scale = min(max(width > 0 ? boxW / w : 0, height > 0 ? boxH / h : 0), 1)
            let covered = scale < 1 ? try resized(bitmap, scale) : bitmap
            guard mode == .fillCrop, width > 0, height > 0 else { return covered }
            let cropW = min(width, covered.width), cropH = min(height, covered.height)
            let (gx, gy) = switch gravity {
            case .anchor(let x, let y), .focalPoint(let x, let y): (x, y)
            }
            // The crop keeps the gravity point where it is in the box (a focal point is centred when it can be).
            let center: Bool = if case .focalPoint = gravity { true } else { false }
            func origin(_ size: Int, _ crop: Int, _ g: Double) -> Double {
                let free = Double(size - crop)
                let start = center ? g * Double(size) - Double(crop) / 2 : g * free
                return min(max(0, start.rounded()), free)
            }
            return try CroppingTransformer(x: origin(covered.width, cropW, gx), y: origin(covered.height, cropH, gy),
                                           width: Double(cropW), height: Double(cropH)).transform(covered)
        }
    }

    private func resized(_ bitmap: Bitmap, _ scale: Double) throws -> Bitmap {
        let targetW = max(1, (Double(bitmap.width) * scale).rounded()), targetH = max(1, (Double(bitmap.height) * scale).rounded())
        return try ResizingTransformer(width: targetW, height: targetH, scaleMode: .fill).transform(bitmap)
    }
}

extension ProcessingRequest {
    /// The box in pixels, the device pixel ratio applied.
    var pixelBox: (width: Int, height: Int) {
        (Int((Double(width) * devicePixelRatio).rounded()), Int((Double(height) * devicePixelRatio).rounded()))
    }

    /// The library transformers that make this request's result, in order: resize (unless a
    /// decode at size does it), blur, rotate, flip, grayscale, tint, round corners.
    func transformers(resizeByDecoding: Bool) -> [any ImageTransformer] {
        var list: [any ImageTransformer] = []
        let box = pixelBox
        if !resizeByDecoding, box.width > 0 || box.height > 0 {
            list.append(ServerResizeTransformer(mode: mode, width: box.width, height: box.height, gravity: gravity))
        }
        if let blurRadius { list.append(BlurTransformer(radius: blurRadius)) }
        if let rotation, rotation.truncatingRemainder(dividingBy: 360) != 0 { list.append(RotationTransformer(angle: -rotation * .pi / 180)) }
        if flipHorizontal || flipVertical { list.append(FlippingTransformer(horizontal: flipHorizontal, vertical: flipVertical)) }
        if grayscale { list.append(GrayscaleTransformer()) }
        if let tint { list.append(TintTransformer(color: tint)) }
        if let cornerRadius, cornerRadius > 0 { list.append(RoundCornerTransformer(radius: cornerRadius * devicePixelRatio)) }
        return list
    }

    /// How the decoder reduces the image for this request (JPEG's DCT scaling, WebP's scaler:
    /// the full-size pixels are never held).
    enum DecodeReduction: Equatable {
        /// Full size: no resize.
        case none
        /// Into the box: the library's thumbnail, which is the whole resize.
        case fit
        /// To the smallest size that fills the box: the resize then crops, stretches or keeps it.
        case fill
    }

    /// A fit into both sides is the library's thumbnail; anything else with a box (one side
    /// free, fill, fill-crop, exact) needs at least the pixels that fill the box.
    var decodeReduction: DecodeReduction {
        guard width > 0 || height > 0 else { return .none }
        return mode == .fit && width > 0 && height > 0 ? .fit : .fill
    }

    /// Whether the decoder does the whole resize.
    var resizesByDecoding: Bool { decodeReduction == .fit }
}

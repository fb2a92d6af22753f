import Foundation
import WebImage

/// The sizes a request's geometry goes through, planned from the size of the source the
/// transformers receive, before any pixel is touched: the crop of the source, the resize (mode,
/// enlarge, minimum sizes, zoom), the crop to the box, the extension to the box. The result's
/// size for the limits and the transformer that makes it read the same plan. Where each crop
/// and extension sits (the gravity, which may look at the pixels) is decided as it runs.
struct ResultPlan: Equatable {
    /// The source's size.
    var source: PixelSize
    /// The part of the source kept by `c:` (the whole source without one).
    var cropped: PixelSize
    /// The size the kept part is resized to.
    var scaled: PixelSize
    /// The part of the resized image kept by a fill (`scaled` without one).
    var filled: PixelSize
    /// The canvas the image is extended to (`filled` without an extension).
    var canvas: PixelSize

    /// The plan of `request` for a source of `width` x `height`.
    init(_ request: ProcessingRequest, width: Int, height: Int) {
        source = PixelSize(width: width, height: height)
        let (boxW, boxH) = request.pixelBox
        cropped = source
        if let crop = request.crop {
            func side(_ asked: Double, _ full: Int) -> Int {
                if asked <= 0 { return full }
                return min(full, max(1, Int((asked < 1 ? asked * Double(full) : asked).rounded())))
            }
            cropped = PixelSize(width: side(crop.width, width), height: side(crop.height, height))
        }
        let (w, h) = (Double(cropped.width), Double(cropped.height))
        let bw = Double(boxW), bh = Double(boxH)
        var mode = request.mode
        if mode == .auto { mode = boxW > 0 && boxH > 0 && (w >= h) == (bw >= bh) ? .fill : .fit }
        var (sx, sy): (Double, Double)
        switch mode {
        case .force:
            (sx, sy) = (boxW > 0 ? bw / w : 1, boxH > 0 ? bh / h : 1)
        case .fit, .auto:
            let s = boxW == 0 && boxH == 0 ? 1 : min(boxW > 0 ? bw / w : .infinity, boxH > 0 ? bh / h : .infinity)
            (sx, sy) = (s, s)
        case .fill, .fillDown, .cover:
            let s = boxW == 0 && boxH == 0 ? 1 : max(boxW > 0 ? bw / w : 0, boxH > 0 ? bh / h : 0)
            (sx, sy) = (s, s)
        }
        if !request.enlarge, mode != .force { (sx, sy) = (min(sx, 1), min(sy, 1)) }
        let minW = Double(request.minWidth) * request.devicePixelRatio, minH = Double(request.minHeight) * request.devicePixelRatio
        if minW > 0, w * sx < minW { let s = minW / w; (sx, sy) = mode == .force ? (s, sy) : (s, s) }
        if minH > 0, h * sy < minH { let s = minH / h; (sx, sy) = mode == .force ? (sx, s) : (s, s) }
        sx *= request.zoomX
        sy *= request.zoomY
        scaled = PixelSize(width: max(1, Int((w * sx).rounded())), height: max(1, Int((h * sy).rounded())))
        filled = scaled
        if mode == .fill || mode == .fillDown, boxW > 0, boxH > 0 {
            if mode == .fillDown, scaled.width < boxW || scaled.height < boxH {
                // Too small to fill the box: the box's aspect ratio, as large as the image allows.
                let ratio = bw / bh
                filled = Double(scaled.width) / Double(scaled.height) > ratio
                    ? PixelSize(width: max(1, Int((Double(scaled.height) * ratio).rounded())), height: scaled.height)
                    : PixelSize(width: scaled.width, height: max(1, Int((Double(scaled.width) / ratio).rounded())))
            } else {
                filled = PixelSize(width: min(boxW, scaled.width), height: min(boxH, scaled.height))
            }
        }
        canvas = filled
        if request.extend != nil, boxW > 0 || boxH > 0 {
            canvas = PixelSize(width: max(filled.width, boxW), height: max(filled.height, boxH))
        }
    }

    /// Whether the plan changes nothing of the source's geometry.
    var isIdentity: Bool { cropped == source && scaled == source && filled == source && canvas == source }
}

extension ProcessingRequest {
    /// The box in pixels, the device pixel ratio applied.
    var pixelBox: (width: Int, height: Int) {
        (Int((Double(width) * devicePixelRatio).rounded()), Int((Double(height) * devicePixelRatio).rounded()))
    }

    /// Whether the request asks for any geometry before the effects (a box, a crop, a trim, a
    /// minimum size, a zoom).
    var hasGeometry: Bool {
        let (w, h) = pixelBox
        return w > 0 || h > 0 || crop != nil || trim != nil || minWidth > 0 || minHeight > 0 || zoomX != 1 || zoomY != 1
    }

    /// The padding in pixels, the device pixel ratio applied.
    var pixelPadding: Padding? {
        padding.map { p in
            func scaled(_ v: Int) -> Int { Int((Double(v) * devicePixelRatio).rounded()) }
            return Padding(top: scaled(p.top), right: scaled(p.right), bottom: scaled(p.bottom), left: scaled(p.left))
        }
    }
}

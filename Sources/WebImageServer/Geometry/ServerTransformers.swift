import Foundation
import WebImage

/// The geometry of a request, as `ResultPlan` plans it: trim, crop of the source, resize, crop
/// to the box, extension to the box (in the background colour, transparent by default). What
/// looks at the pixels (the trim's borders, a smart crop's window) is decided once, on the first
/// frame, and every frame of an animation is cut the same way.
struct ServerGeometryTransformer: ImageTransformer {
    let request: ProcessingRequest

    var key: String {
        let r = request
        return "ServerGeometry(\(r.mode.rawValue),\(r.pixelBox),\(r.gravity),\(r.gravityOffsetX),\(r.gravityOffsetY),\(r.enlarge),"
            + "\(String(describing: r.extend)),\(r.minWidth),\(r.minHeight),\(r.zoomX),\(r.zoomY),\(String(describing: r.crop)),"
            + "\(String(describing: r.trim)),\(r.devicePixelRatio),\(r.background?.hexString ?? "-"))"
    }

    func transform(_ image: Image) throws -> Image {
        let (geometry, first) = try ResolvedGeometry.resolve(request, firstFrame: image.bitmap.converted(to: .rgba8))
        guard image.isAnimated else {
            // The colour description goes with the pixels (a `cs:original` image keeps its profile).
            var still = Image(bitmap: first, format: image.format, scale: image.scale)
            still.colorInfo = image.colorInfo
            return still
        }
        return try geometry.transform(image)
    }
}

/// A request's geometry with every decision made: the frames of an animation go through it.
struct ResolvedGeometry: BitmapTransformer {
    /// The rectangle the trim keeps (nil: no trim).
    var trimmed: (x: Int, y: Int, width: Int, height: Int)?
    var plan: ResultPlan
    var cropOrigin: (x: Int, y: Int)
    var fillOrigin: (x: Int, y: Int)
    var canvasOrigin: (x: Int, y: Int)
    var background: Color

    var key: String { "ResolvedGeometry(\(String(describing: trimmed)),\(plan),\(cropOrigin),\(fillOrigin),\(canvasOrigin),\(background.hexString))" }

    /// The decisions of `request` made on `frame`, and `frame` transformed by them.
    static func resolve(_ request: ProcessingRequest, firstFrame frame: Bitmap) throws -> (ResolvedGeometry, Bitmap) {
        var image = frame
        var trimmed: (x: Int, y: Int, width: Int, height: Int)?
        if let trim = request.trim {
            let trimmer = TrimmingTransformer(threshold: trim.threshold, color: trim.color, equalHorizontal: trim.equalHorizontal,
                                              equalVertical: trim.equalVertical)
            if let rect = trimmer.bounds(of: image), rect.width != image.width || rect.height != image.height {
                trimmed = rect
                image = try Self.cropped(image, rect.x, rect.y, rect.width, rect.height)
            }
        }
        let plan = ResultPlan(request, width: image.width, height: image.height)
        var geometry = ResolvedGeometry(trimmed: trimmed, plan: plan, cropOrigin: (0, 0), fillOrigin: (0, 0), canvasOrigin: (0, 0),
                                        background: request.background ?? .clear)
        if plan.cropped != plan.source {
            geometry.cropOrigin = try Placement.origin(of: plan.cropped, in: plan.source, gravity: request.crop?.gravity ?? request.gravity,
                                                       offsetX: request.gravityOffsetX, offsetY: request.gravityOffsetY, pixels: image)
            image = try Self.cropped(image, geometry.cropOrigin.x, geometry.cropOrigin.y, plan.cropped.width, plan.cropped.height)
        }
        if plan.scaled != plan.cropped {
            image = try ResizingTransformer(width: Double(plan.scaled.width), height: Double(plan.scaled.height), scaleMode: .fill).transform(image)
        }
        if plan.filled != plan.scaled {
            geometry.fillOrigin = try Placement.origin(of: plan.filled, in: plan.scaled, gravity: request.gravity,
                                                       offsetX: request.gravityOffsetX, offsetY: request.gravityOffsetY, pixels: image)
            image = try Self.cropped(image, geometry.fillOrigin.x, geometry.fillOrigin.y, plan.filled.width, plan.filled.height)
        }
        if plan.canvas != plan.filled {
            let gravity = request.extend == .smart ? .anchor(x: 0.5, y: 0.5) : request.extend ?? .anchor(x: 0.5, y: 0.5)
            geometry.canvasOrigin = try Placement.origin(of: plan.filled, in: plan.canvas, gravity: gravity, offsetX: 0, offsetY: 0, pixels: nil)
            image = try geometry.padded(image)
        }
        return (geometry, image)
    }

    /// A frame cut as the first one was.
    func transform(_ bitmap: Bitmap) throws -> Bitmap {
        var image = bitmap
        if let trimmed { image = try Self.cropped(image, trimmed.x, trimmed.y, trimmed.width, trimmed.height) }
        if plan.cropped != plan.source {
            image = try Self.cropped(image, cropOrigin.x, cropOrigin.y, plan.cropped.width, plan.cropped.height)
        }
        if plan.scaled != plan.cropped {
            image = try ResizingTransformer(width: Double(plan.scaled.width), height: Double(plan.scaled.height), scaleMode: .fill).transform(image)
        }
        if plan.filled != plan.scaled {
            image = try Self.cropped(image, fillOrigin.x, fillOrigin.y, plan.filled.width, plan.filled.height)
        }
        if plan.canvas != plan.filled { image = try padded(image) }
        return image
    }

    private func padded(_ image: Bitmap) throws -> Bitmap {
        try PaddingTransformer(top: canvasOrigin.y, right: plan.canvas.width - plan.filled.width - canvasOrigin.x,
                               bottom: plan.canvas.height - plan.filled.height - canvasOrigin.y, left: canvasOrigin.x,
                               color: background).transform(image)
    }

    private static func cropped(_ image: Bitmap, _ x: Int, _ y: Int, _ width: Int, _ height: Int) throws -> Bitmap {
        try CroppingTransformer(x: Double(x), y: Double(y), width: Double(width), height: Double(height)).transform(image)
    }
}

/// Where a region sits within a larger one for a gravity: its top-left corner.
enum Placement {
    /// The corner of `inner` in `outer`: an anchor's point of the free space, moved by the offsets
    /// away from the edge it names (toward the right and bottom from the centre); a focal point
    /// centred when it can be; smart, the window `AttentionCrop` picks on `pixels`. Clamped inside.
    static func origin(of inner: PixelSize, in outer: PixelSize, gravity: ProcessingRequest.Gravity, offsetX: Double, offsetY: Double,
                       pixels: Bitmap?) throws -> (x: Int, y: Int) {
        let freeX = max(0, outer.width - inner.width), freeY = max(0, outer.height - inner.height)
        let x: Double, y: Double
        switch gravity {
        case .anchor(let gx, let gy):
            x = gx * Double(freeX) + (gx > 0.5 ? -offsetX : offsetX)
            y = gy * Double(freeY) + (gy > 0.5 ? -offsetY : offsetY)
        case .focalPoint(let fx, let fy):
            x = fx * Double(outer.width) - Double(inner.width) / 2
            y = fy * Double(outer.height) - Double(inner.height) / 2
        case .smart:
            guard let pixels else { return (freeX / 2, freeY / 2) }
            let corner = try AttentionCrop.origin(of: inner.width, inner.height, in: pixels)
            return (min(corner.x, freeX), min(corner.y, freeY))
        }
        return (min(max(0, Int(x.rounded())), freeX), min(max(0, Int(y.rounded())), freeY))
    }
}

/// The configured watermark on a result: placed by gravity with offsets, scaled to a fraction
/// of the result's width, or repeated over it (`wm:`).
struct ServerWatermarkTransformer: BitmapTransformer {
    let mark: Bitmap
    let options: ProcessingRequest.Watermark

    var key: String { "ServerWatermark(\(mark.width)x\(mark.height),\(options))" }

    func transform(_ bitmap: Bitmap) throws -> Bitmap {
        var mark = self.mark
        if options.scale > 0 {
            let width = max(1, (Double(bitmap.width) * options.scale).rounded())
            let height = max(1, (width * Double(mark.height) / Double(mark.width)).rounded())
            mark = try ResizingTransformer(width: width, height: height, scaleMode: .fill).transform(mark)
        }
        guard let position = options.position else {
            return try WatermarkTransformer(mark: mark, placement: .tiled, opacity: options.opacity).transform(bitmap)
        }
        let (x, y) = try Placement.origin(of: PixelSize(width: mark.width, height: mark.height), in: PixelSize(width: bitmap.width, height: bitmap.height),
                                          gravity: position, offsetX: options.offsetX, offsetY: options.offsetY, pixels: nil)
        return try WatermarkTransformer(mark: mark, placement: .at(x: x, y: y), opacity: options.opacity).transform(bitmap)
    }
}

/// Transparency flattened onto a colour, for a format without alpha (`bg:` with JPEG).
struct BackgroundFlatteningTransformer: BitmapTransformer {
    let color: Color

    var key: String { "BackgroundFlattening(\(color.hexString))" }

    func transform(_ bitmap: Bitmap) throws -> Bitmap {
        guard bitmap.hasTransparency else { return bitmap }
        let background = SIMD3<Float>(Float(color.red), Float(color.green), Float(color.blue)) * 255
        var out = bitmap
        out.withUnsafeMutableBytes { raw in
            for i in raw.bindMemory(to: SIMD4<UInt8>.self).indices {
                let pixels = raw.bindMemory(to: SIMD4<UInt8>.self)
                let p = pixels[i]
                let a = Float(p.w) / 255
                let c = SIMD3<Float>(Float(p.x), Float(p.y), Float(p.z)) * a + background * (1 - a) + 0.5
                pixels[i] = SIMD4(UInt8(min(255, c.x)), UInt8(min(255, c.y)), UInt8(min(255, c.z)), 255)
            }
        }
        return out
    }
}

extension ProcessingRequest {
    /// The transformers that make this request's result, in order: the geometry, blur,
    /// sharpen, pixelate, brightness/contrast/saturation, grayscale, tint, rotation, flip, round
    /// corners, padding, watermark (`mark`, the configured one). A decode at size has made the
    /// source no larger than the box: the geometry then finds nothing left to resize.
    func transformers(watermark mark: Bitmap? = nil) -> [any ImageTransformer] {
        var list: [any ImageTransformer] = []
        if hasGeometry { list.append(ServerGeometryTransformer(request: self)) }
        if let blurRadius { list.append(BlurTransformer(radius: blurRadius)) }
        if let sharpen { list.append(SharpeningTransformer(sigma: sharpen)) }
        if let pixelate { list.append(PixelatingTransformer(size: Int((Double(pixelate) * devicePixelRatio).rounded()))) }
        if brightness != nil || contrast != nil || saturation != nil {
            list.append(ColorAdjustingTransformer(brightness: Double(brightness ?? 0), contrast: contrast ?? 1, saturation: saturation ?? 1))
        }
        if let rotation, rotation.truncatingRemainder(dividingBy: 360) != 0 { list.append(RotationTransformer(angle: -rotation * .pi / 180)) }
        if flipHorizontal || flipVertical { list.append(FlippingTransformer(horizontal: flipHorizontal, vertical: flipVertical)) }
        if grayscale { list.append(GrayscaleTransformer()) }
        if let tint { list.append(TintTransformer(color: tint)) }
        if let cornerRadius, cornerRadius > 0 { list.append(RoundCornerTransformer(radius: cornerRadius * devicePixelRatio)) }
        if let padding = pixelPadding {
            list.append(PaddingTransformer(top: padding.top, right: padding.right, bottom: padding.bottom, left: padding.left,
                                           color: background ?? .clear))
        }
        if let watermark, let mark { list.append(ServerWatermarkTransformer(mark: mark, options: watermark)) }
        return list
    }

    /// How the decoder reduces the image for this request (JPEG's DCT scaling, WebP's scaler:
    /// the full-size pixels are never held).
    enum DecodeReduction: Equatable {
        /// Full size: no resize, or a geometry that needs the source's own pixels (a crop or
        /// trim in source pixels, a zoom or minimum size past the box).
        case none
        /// Into the box: the library's thumbnail, which is the whole resize.
        case fit
        /// To the smallest size that fills the box: the resize then crops, stretches or keeps it.
        case fill
    }

    /// A fit into both sides is the library's thumbnail; anything else with a box (one side
    /// free, fill, force, auto) needs at least the pixels that fill the box.
    var decodeReduction: DecodeReduction {
        let (w, h) = pixelBox
        guard w > 0 || h > 0 else { return .none }
        let minimum = (Double(minWidth) * devicePixelRatio, Double(minHeight) * devicePixelRatio)
        if crop != nil || trim != nil || zoomX > 1 || zoomY > 1 || minimum.0 > Double(w) || minimum.1 > Double(h) { return .none }
        return mode == .fit && w > 0 && h > 0 && !enlarge && minWidth == 0 && minHeight == 0 && zoomX == 1 && zoomY == 1 ? .fit : .fill
    }

    /// Where the decoder may cut the box out of the image that fills it: a fill whose only step
    /// after that decode is this cut (a compass gravity without offsets; no minimum size, zoom
    /// or extension). The result is the same pixels as `ResolvedGeometry`'s cut; nil otherwise.
    var decodeFillAnchor: FillAnchor? {
        guard decodeReduction == .fill, mode == .fill || mode == .fillDown, pixelBox.width > 0, pixelBox.height > 0,
              case .anchor(let x, let y) = gravity, gravityOffsetX == 0, gravityOffsetY == 0,
              minWidth == 0, minHeight == 0, zoomX == 1, zoomY == 1, extend == nil else { return nil }
        return FillAnchor(x: x, y: y)
    }
}

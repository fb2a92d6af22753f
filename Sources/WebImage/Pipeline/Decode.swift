import Foundation

/// Stage 4, decoding: when the load was progressive, the incremental decoder's image from the
/// state it reached with every byte (a JPEG is not decoded again; its error, if any, is the
/// load's); else the context's coder or the registry, each given the call's context. Then the
/// thumbnail box.
extension ImagePipeline {
    func decode(_ data: Data, request: LoadRequest, coders: ImageCoders, incremental: (any IncrementalImageDecoder)?) throws -> Image {
        let image: Image
        if let incremental {
            image = try incremental.finish()
        } else if let coder = request.coder, coder.canDecode(data) || request.settings.formatHint.map({ coder.canDecode(data, hint: $0) }) == true {
            image = try coder.decode(data, options: request.decodeOptions, context: request.context)
        } else {
            image = try coders.decode(data, options: request.decodeOptions, context: request.context)
        }
        return try thumbnail(image, request: request)
    }

    /// Fits a still image into the thumbnail box (the decoder already bounded its longer side),
    /// or stretches it to the box when the aspect ratio is not preserved. Never enlarges.
    func thumbnail(_ image: Image, request: LoadRequest) throws -> Image {
        let image = filled(image, request: request)
        guard let box = request.thumbnail, !image.isAnimated else { return image }
        let (width, height) = (image.width, image.height)
        if !request.preservesAspectRatio {
            guard box.width < width || box.height < height else { return image }
            let resized = try ResizingTransformer(width: Double(min(box.width, width)), height: Double(min(box.height, height)),
                                                  scaleMode: .fill).transform(image)
            return resized
        }
        let factor = min(Double(box.width) / Double(width), Double(box.height) / Double(height))
        guard factor < 1 else { return image }
        let bitmap = image.bitmap.areaDownscaled(toWidth: max(1, Int((Double(width) * factor).rounded())),
                                                 height: max(1, Int((Double(height) * factor).rounded())))
        var thumbnail = Image(bitmap: bitmap, format: image.format, scale: image.scale)
        thumbnail.colorInfo = image.colorInfo
        return thumbnail
    }

    /// Reduces a still image to the smallest size that fills the load's fill box, and cuts the
    /// box out of it at the load's fill anchor, where a decoder did not already (an original
    /// decoded at full size because memory keeps it, a coder that does not cut).
    func filled(_ image: Image, request: LoadRequest) -> Image {
        guard let box = request.settings.fillSize, !image.isAnimated else { return image }
        let target = ImageDecodingOptions(fillSize: box).targetSize(width: image.width, height: image.height)
        var bitmap = image.bitmap
        if target.width < image.width || target.height < image.height {
            bitmap = bitmap.areaDownscaled(toWidth: target.width, height: target.height)
        }
        if let anchor = request.settings.fillAnchor { bitmap = anchor.cut(bitmap, to: box) }
        guard bitmap.width != image.width || bitmap.height != image.height else { return image }
        var filled = Image(bitmap: bitmap, format: image.format, scale: image.scale)
        filled.colorInfo = image.colorInfo
        return filled
    }
}

import Foundation
import WebImage

extension ProcessingOptions {
    /// Pixels: `t`, `bl`, `sh`, `pix`, `br`, `co`, `sa`, `a`, `rot`, `fl`, `gs`, `tint`, `rc`, `wm`.
    static let effects: [([String], Apply)] = [
        (["t", "trim"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...4)
            var trim = ProcessingRequest.Trim(threshold: try a.number(0, "the trim threshold", 0...255))
            if a.has(1) {
                guard let color = ProcessingRequest.color(hex: a[1]) else { throw a.bad("the trim colour must be a hex colour (RRGGBB), not \"\(a[1])\"") }
                trim.color = color
            }
            if a.has(2) { trim.equalHorizontal = try a.bool(2) }
            if a.has(3) { trim.equalVertical = try a.bool(3) }
            request.trim = trim
        }),
        (["bl", "blur"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            let radius = try a.number(0, "the blur radius", 0...a.limits.maximumBlurRadius)
            request.blurRadius = radius > 0 ? radius : nil
        }),
        (["sh", "sharpen"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            let sigma = try a.number(0, "the sharpen sigma", 0...a.limits.maximumBlurRadius)
            request.sharpen = sigma > 0 ? sigma : nil
        }),
        (["pix", "pixelate"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            let size = try a.size(0, "the pixelate size")
            request.pixelate = size > 1 ? size : nil
        }),
        (["br", "brightness"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            let value = try a.integer(0, "the brightness", -255...255)
            request.brightness = value != 0 ? value : nil
        }),
        (["co", "contrast"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            let value = try a.number(0, "the contrast", 0...10)
            request.contrast = value != 1 ? value : nil
        }),
        (["sa", "saturation"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            let value = try a.number(0, "the saturation", 0...10)
            request.saturation = value != 1 ? value : nil
        }),
        (["a", "adjust"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...3)
            if a.has(0) { let v = try a.integer(0, "the brightness", -255...255); request.brightness = v != 0 ? v : nil }
            if a.has(1) { let v = try a.number(1, "the contrast", 0...10); request.contrast = v != 1 ? v : nil }
            if a.has(2) { let v = try a.number(2, "the saturation", 0...10); request.saturation = v != 1 ? v : nil }
        }),
        (["rot", "rotate"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.rotation = try a.number(0, "the rotation", -360...360)
        }),
        (["fl", "flip"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            switch a[0] {
            case "h": request.flipHorizontal = true
            case "v": request.flipVertical = true
            case "hv", "vh": (request.flipHorizontal, request.flipVertical) = (true, true)
            default: throw a.bad("flip takes h, v or hv, not \"\(a[0])\"")
            }
        }),
        (["gs", "grayscale"], { request, a throws(ProcessingRequestError) in
            try a.expect(0...0)
            request.grayscale = true
        }),
        (["tint"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            guard let color = ProcessingRequest.color(hex: a[0]) else { throw a.bad("the tint must be a hex color (RRGGBB or RRGGBBAA), not \"\(a[0])\"") }
            request.tint = color
        }),
        (["rc", "round"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.cornerRadius = try a.number(0, "the corner radius", 0...Double(a.limits.maximumDimension))
        }),
        (["wm", "watermark"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...5)
            let opacity = try a.number(0, "the watermark opacity", 0...1)
            guard opacity > 0 else { request.watermark = nil; return }
            var watermark = ProcessingRequest.Watermark(opacity: opacity, position: .anchor(x: 0.5, y: 0.5))
            if a.has(1) {
                if a[1] == "re" {
                    watermark.position = nil
                } else {
                    let (gravity, next) = try a.gravity(at: 1)
                    guard case .anchor = gravity, next == 2 else { throw a.bad("the watermark position is an anchor (ce, no, ..., soea) or re") }
                    watermark.position = gravity
                }
            }
            let bound = Double(a.limits.maximumDimension)
            if a.has(2) { watermark.offsetX = try a.number(2, "the watermark's x offset", -bound...bound) }
            if a.has(3) { watermark.offsetY = try a.number(3, "the watermark's y offset", -bound...bound) }
            if a.has(4) { watermark.scale = try a.number(4, "the watermark scale", 0...1) }
            request.watermark = watermark
        }),
    ]
}

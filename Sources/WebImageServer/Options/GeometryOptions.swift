import Foundation
import WebImage

extension ProcessingOptions {
    /// Size, fit, crop and canvas: `rs`, `rt`, `w`, `h`, `s`, `el`, `ex`, `mw`, `mh`, `z`, `g`,
    /// `fp`, `c`, `pd`, `bg`, `dpr`.
    static let geometry: [([String], Apply)] = [
        (["rs", "resize"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...5)
            try request.setMode(a[0], a)
            if a.has(1) { request.width = try a.size(1, "the width") }
            if a.has(2) { request.height = try a.size(2, "the height") }
            if a.has(3) { request.enlarge = try a.bool(3) }
            if a.has(4) { request.extend = try a.bool(4) ? .anchor(x: 0.5, y: 0.5) : nil }
        }),
        (["rt", "resizing_type"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            try request.setMode(a[0], a)
        }),
        (["s", "size"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...4)
            if a.has(0) { request.width = try a.size(0, "the width") }
            if a.has(1) { request.height = try a.size(1, "the height") }
            if a.has(2) { request.enlarge = try a.bool(2) }
            if a.has(3) { request.extend = try a.bool(3) ? .anchor(x: 0.5, y: 0.5) : nil }
        }),
        (["w", "width"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.width = try a.size(0, "the width")
        }),
        (["h", "height"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.height = try a.size(0, "the height")
        }),
        (["mw", "min-width", "min_width"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.minWidth = try a.size(0, "the minimum width")
        }),
        (["mh", "min-height", "min_height"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.minHeight = try a.size(0, "the minimum height")
        }),
        (["el", "enlarge"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.enlarge = try a.bool(0)
        }),
        (["ex", "extend"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...4)
            guard try a.bool(0) else { request.extend = nil; return }
            var gravity = ProcessingRequest.Gravity.anchor(x: 0.5, y: 0.5)
            if a.has(1) {
                let (parsed, next) = try a.gravity(at: 1)
                guard parsed != .smart, next == a.count else { throw a.bad("extend takes 1 and a gravity (not sm)") }
                gravity = parsed
            }
            request.extend = gravity
        }),
        (["z", "zoom"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...2)
            request.zoomX = try a.number(0, "the zoom", 0.01...16)
            request.zoomY = a.has(1) ? try a.number(1, "the vertical zoom", 0.01...16) : request.zoomX
        }),
        (["g", "gravity"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...3)
            let (gravity, next) = try a.gravity(at: 0)
            request.gravity = gravity
            if next < a.count {
                guard case .anchor = gravity, a.count == next + 2 else { throw a.bad("gravity takes a type and its x and y offsets") }
                let bound = Double(a.limits.maximumDimension)
                request.gravityOffsetX = try a.number(next, "the gravity's x offset", -bound...bound)
                request.gravityOffsetY = try a.number(next + 1, "the gravity's y offset", -bound...bound)
            }
        }),
        (["fp", "focus"], { request, a throws(ProcessingRequestError) in
            try a.expect(2...2)
            request.gravity = .focalPoint(x: try a.number(0, "the focal point's x", 0...1), y: try a.number(1, "the focal point's y", 0...1))
        }),
        (["c", "crop"], { request, a throws(ProcessingRequestError) in
            try a.expect(2...5)
            let bound = Double(a.limits.maximumDimension) * 16
            let width = try a.number(0, "the crop width", 0...bound), height = try a.number(1, "the crop height", 0...bound)
            var crop = ProcessingRequest.Crop(width: width, height: height)
            if a.has(2) {
                let (gravity, next) = try a.gravity(at: 2)
                guard next == a.count else { throw a.bad("crop takes a width, a height and a gravity") }
                crop.gravity = gravity
            }
            request.crop = width == 0 && height == 0 ? nil : crop
        }),
        (["pd", "padding"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...4)
            let sides = try (0..<a.count).map { (i: Int) throws(ProcessingRequestError) -> Int in a.has(i) ? try a.size(i, "the padding") : 0 }
            // CSS order and shorthand: top, right, bottom, left.
            let top = sides[0], right = sides.count > 1 ? sides[1] : top
            let bottom = sides.count > 2 ? sides[2] : top, left = sides.count > 3 ? sides[3] : right
            request.padding = [top, right, bottom, left].allSatisfy { $0 == 0 } ? nil
                : ProcessingRequest.Padding(top: top, right: right, bottom: bottom, left: left)
        }),
        (["bg", "background"], { request, a throws(ProcessingRequestError) in
            try a.expect(0...3)
            request.background = a.count == 0 || (a.count == 1 && a[0].isEmpty) ? nil : try a.color(from: 0, "the background")
        }),
        (["dpr"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.devicePixelRatio = try a.number(0, "the device pixel ratio", 1...a.limits.maximumDevicePixelRatio)
        }),
    ]
}

extension ProcessingRequest {
    /// The resize mode named `text` (imgproxy's and ours).
    mutating func setMode(_ text: String, _ a: OptionArguments) throws(ProcessingRequestError) {
        switch text {
        case "fill-crop": mode = .fill
        case "exact": mode = .force
        default:
            guard let mode = ResizeMode(rawValue: text) else {
                throw a.bad("unknown resize mode \"\(text)\" (fit, fill, fill-down, force, auto, cover)")
            }
            self.mode = mode
        }
    }

    /// The checks of the whole request's geometry, once every option is read.
    func checkGeometry(limits: ProcessingLimits) throws(ProcessingRequestError) {
        let sides = [width, height, minWidth, minHeight].map { Double($0) * devicePixelRatio }
        guard sides.allSatisfy({ $0 <= Double(limits.maximumDimension) }) else {
            throw ProcessingRequestError(400, "the result would be larger than \(limits.maximumDimension) pixels on a side")
        }
        if mode == .force, width == 0 || height == 0, width != height {
            throw ProcessingRequestError(400, "rs:force needs both a width and a height")
        }
    }
}

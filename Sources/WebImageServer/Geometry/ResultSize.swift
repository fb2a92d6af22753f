import Foundation
import WebImage

extension ProcessingRequest {
    /// Whether the request resizes (else its result is the source's size, or the rotation's box
    /// of it).
    var resizesSource: Bool { pixelBox.width > 0 || pixelBox.height > 0 }

    /// The size of this request's result for a source decoded at `width` x `height`, from the
    /// plan of its geometry and the later operations' in their order, before any of them runs:
    /// the plan (a trim can only make it smaller), the rotation's bounding box (rounded up),
    /// the padding; the other operations keep the size.
    func resultSize(width: Int, height: Int) -> (width: Int, height: Int) {
        let plan = ResultPlan(self, width: width, height: height)
        var w = Double(plan.canvas.width), h = Double(plan.canvas.height)
        if let rotation, rotation.truncatingRemainder(dividingBy: 360) != 0 {
            let quarterTurns = rotation / 90
            if abs(quarterTurns - quarterTurns.rounded()) < 1e-9 {
                if Int(quarterTurns.rounded()) % 2 != 0 { (w, h) = (h, w) }
            } else {
                let angle = rotation * .pi / 180, c = abs(cos(angle)), s = abs(sin(angle))
                (w, h) = ((w * c + h * s).rounded(.up), (w * s + h * c).rounded(.up))
            }
        }
        if let padding = pixelPadding {
            w += Double(padding.left + padding.right)
            h += Double(padding.top + padding.bottom)
        }
        return (Int(w), Int(h))
    }
}

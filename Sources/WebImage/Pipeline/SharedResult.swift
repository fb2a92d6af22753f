import Foundation

/// The result of a shared work, shared by reference among its callers: resuming a thousand
/// callers then costs one reference each, not one per field of the result (the callers run on
/// both cores at once, and every reference count they touch is contended).
final class SharedResult: Sendable {
    let result: ImageResult
    init(_ result: ImageResult) { self.result = result }
}

/// What a load ends with: a memory hit as it is (no allocation on the fast path), or the result
/// of a shared work.
enum LoadOutcome: Sendable {
    case hit(ImageResult)
    case shared(SharedResult)

    var result: ImageResult {
        switch self {
        case .hit(let result): result
        case .shared(let shared): shared.result
        }
    }

    /// The image alone (what `image(for:)` returns: one reference taken, not the whole result copied).
    var image: Image {
        switch self {
        case .hit(let result): result.image
        case .shared(let shared): shared.result.image
        }
    }
}

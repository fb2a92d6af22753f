import ExampleSupport
import Foundation
import WebImage

// Thumbnails two ways: decoding at a small size (thumbnailPixelSize) and transforming the
// decoded image (a transformer). Each result has its own cache key, SDWebImage's rule.
// Usage: swift run Thumbnails [URL]

let url = Samples.arguments(or: [Samples.photo])[0]
let manager = ImageManager.shared

let decodedSmall = ImageContext(thumbnailPixelSize: PixelSize(width: 128, height: 128))
let small = try await manager.image(for: url, context: decodedSmall)
print("decoded at size: \(small.width)x\(small.height), key \(manager.cacheKey(for: url, context: decodedSmall))")

let rounded = ImageContext(transformer: PipelineTransformer([
    ResizingTransformer(width: 96, height: 96, scaleMode: .aspectFill),
    RoundCornerTransformer(radius: 12),
    GrayscaleTransformer(),
]))
let avatar = try await manager.image(for: url, context: rounded)
print("transformed: \(avatar.width)x\(avatar.height), key \(manager.cacheKey(for: url, context: rounded))")

let output = FileManager.default.temporaryDirectory.appendingPathComponent("avatar.png")
try avatar.encoded(as: .png).write(to: output)
print("wrote \(output.path)")

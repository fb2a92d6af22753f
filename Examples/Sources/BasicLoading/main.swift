import ExampleSupport
import Foundation
import WebImage

// The one call: memory cache, then disk cache, then the loader; decoded, cached, returned.
// Usage: swift run BasicLoading [URL ...]

for url in Samples.arguments(or: [Samples.photo, Samples.animatedGIF]) {
    do {
        let result = try await ImageManager.shared.result(for: url)
        let image = result.image
        print("\(url.lastPathComponent): \(image.format) \(image.width)x\(image.height), \(image.frameCount) frame(s), from \(result.cacheType)")
        // Loading it again is a memory hit.
        let again = try await ImageManager.shared.result(for: url)
        print("  again: from \(again.cacheType)")
    } catch {
        print("\(url): \(error)")
    }
}

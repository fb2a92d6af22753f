import ExampleSupport
import Foundation
import WebImage

// Warm the caches ahead of use: at most 3 loads at once, progress after each URL.
// Usage: swift run Prefetching [URL ...]

let urls = Samples.arguments(or: Samples.all) + [URL(string: "file:///nonexistent/missing.png")!]
let prefetcher = ImagePrefetcher(maxConcurrentPrefetchCount: 3)
for await progress in prefetcher.prefetch(urls) {
    print("\(progress.completed)/\(progress.total) (finished \(progress.finished), skipped \(progress.skipped))")
}
let cached = try await ImageManager.shared.result(for: urls[0])
print("\(urls[0].lastPathComponent) is now a \(cached.cacheType) hit")

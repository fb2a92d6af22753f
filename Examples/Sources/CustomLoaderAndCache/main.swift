import ExampleSupport
import Foundation
import WebImage

// Plug in a loader for a scheme of your own and a cache of your own.
// Usage: swift run CustomLoaderAndCache

/// Loads `asset:NAME` from the samples folder.
struct AssetLoader: ImageLoader {
    func canLoad(_ url: URL) -> Bool { url.scheme == "asset" }

    func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        AsyncThrowingStream { continuation in
            let file = Samples.folder.appendingPathComponent(request.url.absoluteString.dropFirst("asset:".count).description)
            guard let data = FileManager.default.contents(atPath: file.path) else {
                continuation.finish(throwing: ImageError.unreadableFile(path: file.path, reason: "no such asset"))
                return
            }
            continuation.yield(.response(ImageLoaderResponse(statusCode: 200, headers: [:], expectedContentLength: Int64(data.count),
                                                             url: request.url)))
            continuation.yield(.data(data))
            continuation.finish()
        }
    }
}

/// A memory-only cache in a dictionary: the smallest `ImageCaching`.
actor DictionaryCache: ImageCaching {
    private var images: [String: Image] = [:]
    private(set) var stores = 0

    func image(forKey key: String, query: ImageCacheQuery) -> ImageCacheResult? {
        guard query.scope.includesMemory, let image = images[key] else { return nil }
        return ImageCacheResult(image: image, data: nil, cacheType: .memory)
    }

    func store(_ image: Image?, data: Data?, extendedData: Data?, forKey key: String, to destination: ImageCacheType, context: ImageContext) {
        guard destination.includesMemory, let image else { return }
        images[key] = image
        stores += 1
    }

    func removeImage(forKey key: String, from scope: ImageCacheType) { images[key] = nil }
    func containsImage(forKey key: String, in scope: ImageCacheType) -> ImageCacheType { images[key] == nil ? .none : .memory }
    func clear(_ scope: ImageCacheType) { images = [:] }
}

let cache = DictionaryCache()
let loaders = ImageLoaders()
loaders.add(AssetLoader())
let manager = ImageManager(cache: cache, loaders: loaders)
let url = URL(string: "asset:badge-alpha.png")!
let first = try await manager.result(for: url)
let second = try await manager.result(for: url)
print("\(url): \(first.image.width)x\(first.image.height) from \(first.cacheType), then from \(second.cacheType); \(await cache.stores) store(s)")

import Foundation
import Synchronization

/// An ordered registry of loaders (SDWebImage's `SDImageLoadersManager`): the first loader that
/// can load a URL loads it; a loader added later is tried first.
public final class ImageLoaders: Sendable {
    /// HTTP(S) through libcurl, `file:` and `data:` URLs.
    public static let shared = ImageLoaders()

    private let loaders: Mutex<[any ImageLoader]>

    /// A registry of `loaders`, tried in order.
    public init(_ loaders: [any ImageLoader] = [HTTPImageLoader.shared, FileImageLoader(), DataImageLoader()]) {
        self.loaders = Mutex(loaders)
    }

    /// The loaders in the order they are tried.
    public var all: [any ImageLoader] { loaders.withLock { $0 } }

    /// Adds a loader tried before the others.
    public func add(_ loader: any ImageLoader) { loaders.withLock { $0.insert(loader, at: 0) } }

    /// The loader for `url`, or nil.
    public func loader(for url: URL) -> (any ImageLoader)? { all.first { $0.canLoad(url) } }

    /// `chosen` when it can load `url` (a loader the call named), else the registry's loader
    /// for `url`; nil when neither. Each loader is asked once (asking parses the URL's scheme
    /// and host).
    func loader(_ chosen: (any ImageLoader)?, for url: URL) -> (any ImageLoader)? {
        guard let chosen else { return loader(for: url) }
        return chosen.canLoad(url) ? chosen : nil
    }

    /// Loads with the first loader that accepts the URL.
    /// The stream fails with `ImageError.invalidURL` when none does.
    public func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        guard let loader = loader(for: request.url) else {
            return AsyncThrowingStream { $0.finish(throwing: ImageError.invalidURL(request.url.absoluteString)) }
        }
        return loader.load(request)
    }
}

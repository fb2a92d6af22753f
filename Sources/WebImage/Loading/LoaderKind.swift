/// What the pipeline asks of a loader's kind, told by its type instead of a dynamic cast: a
/// cast of an `any ImageLoader` to a class costs about 1,500 instructions under callgrind, a
/// failed one more (the runtime tries Foundation's bridging first), and a load made three.
/// The loaders asked about are final classes or a struct, so their exact type is their kind.
enum LoaderKind {
    /// Whether `loader` reads local files or `data:` URLs (no rate limiting applies to them).
    static func isLocal(_ loader: any ImageLoader) -> Bool {
        let kind = type(of: loader)
        return kind == FileImageLoader.self || kind == DataImageLoader.self
    }

    /// Whether `loader` is an HTTP loader that starts its queued requests newest first (the
    /// manager then admits its loads in the same order).
    static func startsNewestFirst(_ loader: any ImageLoader) -> Bool {
        guard type(of: loader) == HTTPImageLoader.self, let http = loader as? HTTPImageLoader else { return false }
        return http.configuration.executionOrder == .lifo
    }
}

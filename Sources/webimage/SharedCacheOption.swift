import ArgumentParser
import WebImage
import WebImageMemcached

/// `--shared-cache memcached://h1:11211,h2:11211`: a fleet's shared cache tier between this
/// machine's disk cache and the origin (WebImageMemcached).
struct SharedCacheOption: ExpressibleByArgument, Sendable {
    let servers: [SharedCacheConfiguration.Server]

    init?(argument: String) {
        guard let servers = try? SharedCacheConfiguration.servers(from: argument) else { return nil }
        self.servers = servers
    }

    /// How `--help` names the value.
    static var defaultCompletionKind: CompletionKind { .default }

    /// `base` with the tier behind it, or `base` alone when no tier was asked for. The tier's
    /// namespace is the library's default, whatever the local cache's: every machine shares it.
    static func cache(_ base: ImageCache, tier option: SharedCacheOption?) throws -> any ImageCaching {
        guard let option else { return base }
        let tier = try SharedCacheTier(SharedCacheConfiguration(servers: option.servers))
        return TieredImageCache(base: base, tier: tier)
    }
}

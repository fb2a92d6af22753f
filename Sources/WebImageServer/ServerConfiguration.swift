import Foundation
import WebImage
import WebImageIsolation

/// How `webimage serve` runs: where it listens, how requests are signed, what sources it may
/// fetch and the limits of what it does. Read from a JSON file (`--config FILE`, keys as the
/// property names) and the environment (`WEBIMAGE_KEY`, `WEBIMAGE_SALT`, hexadecimal).
public struct ServerConfiguration: Sendable, Codable, Equatable {
    /// The address to listen on (default 127.0.0.1: put a reverse proxy in front).
    public var host = "127.0.0.1"
    /// The port (default 8080; 0 picks a free one).
    public var port = 8080
    /// The signing key, hexadecimal. Required unless `insecure`.
    public var key: String?
    /// The signing salt, hexadecimal. Required unless `insecure`.
    public var salt: String?
    /// Accept any signature (development only: a warning is printed at start).
    public var insecure = false
    /// Sources allowed: host names (`images.example.com`, `*.example.com`) or URL prefixes
    /// (`https://cdn.example.com/photos/`). Empty: any public http(s) source.
    public var allowedSources: [String] = []
    /// Networks an origin may be on although they are not public (CIDR, e.g. `10.20.0.0/16`):
    /// by default no request goes to loopback, private, link-local or metadata addresses.
    public var allowedNetworks: [String] = []
    /// The largest source body, in bytes (default 32 MiB).
    public var maximumSourceBytes = 32 << 20
    /// The largest width or height of a result (default 4096).
    public var maximumDimension = 4096
    /// The most frames an animated result keeps (default 300); more: a 422.
    public var maximumFrames = 300
    /// The largest source canvas decoded (default 50 megapixels, imgproxy's), read from its
    /// header before any pixel is allocated: larger sources are a 422. Without a resize the
    /// source is the result, and no larger than `maximumDimension` squared is decoded.
    public var maximumSourceMegapixels = 50
    /// The most pixels of a result, every frame of an animation counted (default 100
    /// megapixels): a 300-frame animation on a 2000x2000 canvas is refused (422) before any
    /// frame is composited.
    public var maximumResultMegapixels = 100
    /// The pixel memory, in MiB, that the results being transformed and encoded may hold
    /// together (default 128). A request reserves what its result needs (source frame, result
    /// frame, encoder's copy) before any of it exists and waits (holding its decoded source only) while the
    /// budget is taken; one that needs more than the whole budget runs alone.
    public var processingMemoryMegabytes = 128
    /// How long one request may take, fetch included (default 30 s): then a 504.
    public var processingTimeoutSeconds = 30.0
    /// Requests being processed or waiting (default 64); more get a 503 with `Retry-After`.
    public var maximumPendingRequests = 64
    /// Sources fetched, decoded and processed at once (default 4 per core); the other requests
    /// wait in order, holding no source bytes and no pixels: the bound on memory under load.
    public var maximumConcurrentLoads = 4 * ProcessInfo.processInfo.activeProcessorCount
    /// How long a connection may stay with no request in progress (default 10 s): a new one
    /// whose request headers have not all arrived, or a keep-alive one between requests. Then it
    /// is closed: a client that connects and sends nothing holds nothing for long.
    public var idleTimeoutSeconds = 10.0
    /// The most connections open at once (default nil: the descriptor limit, which the server
    /// raises to its hard limit at start, less a reserve of an eighth and at least 64 for its own
    /// files and sockets). Near it, the connection idle the longest is closed for a new one; at
    /// it, new connections wait in the listen backlog.
    public var maximumConnections: Int?
    /// On SIGTERM or SIGINT, how long the requests in flight have to finish (default 10 s);
    /// those still running are then cancelled and answered 503. The whole stop takes about this
    /// plus the flush of pending cache writes.
    public var stopTimeoutSeconds = 10.0
    /// The formats `f:auto` chooses from, in order: the first that the request's `Accept` names
    /// and this server can encode (AVIF needs the WebImageAVIF plug-in registered, as `webimage
    /// serve` does), else the source's format (default `["avif", "webp"]`; `jxl` may be added).
    public var autoFormats = ["avif", "webp"]
    /// The colour space of results when a request does not say (`cs:`): `.sRGB` (the default)
    /// converts a source with a Display P3, Adobe RGB or CMYK profile, as libvips-based proxies
    /// do; `.original` keeps the values and embeds the profile.
    public var colorSpace: ImageColorSpace = .sRGB
    /// Whether results lose the source's EXIF (GPS included), XMP, IPTC and comments unless a
    /// request says `sm:0` (default true, as imgproxy): the unchanged source is rewritten without
    /// them (JPEG, PNG, WebP, GIF) or re-encoded, and encoders write none. The colour profile stays.
    public var stripMetadata = true
    /// Whether EXIF's Copyright and Artist stay when metadata is stripped, unless a request says
    /// `kcr:0` (default true, as imgproxy's `keep_copyright`).
    public var keepCopyright = true
    /// Named option sets a request applies with `pr:NAME` (or `preset:NAME`), each a path of
    /// options such as `"rs:fill:300:300/q:80"`; the one named `default` applies to every
    /// request first. A preset may not name another. Checked at start.
    public var presets: [String: String] = [:]
    /// The quality of each output format when a request names none (`{"jpeg": 80, "webp": 75,
    /// "avif": 60}`; default 82 for every format).
    public var formatQuality: [String: Int] = [:]
    /// An image file drawn by `wm:` (its opacity, position, offsets and scale in the request).
    public var watermark: String?
    /// An image file answered, processed as the request asks, when a source cannot be fetched
    /// or decoded (404, 422, 502, 504): with `X-Fallback-Reason` naming the failure, `no-store`.
    public var fallbackImage: String?
    /// The status of a fallback answer (default 200, as imgproxy's).
    public var fallbackImageStatus = 200
    /// `Cache-Control: public, max-age=` of results (default a year: a result's URL names it),
    /// capped by the origin's own rules under `cachePolicy` `.respectHeaders`.
    public var cacheMaxAgeSeconds = 31_536_000
    /// Whether the origin's caching headers are followed (JSON `"respect"`, the default, or
    /// `"ignore"`): a source is revalidated once stale, `no-store` sources are kept in no cache,
    /// and results pass on the origin's `no-store`, `no-cache` and remaining freshness.
    public var cachePolicy: HTTPCachePolicy = .respectHeaders
    /// The memory cache of decoded images, in MiB (default 64).
    public var memoryCacheMegabytes = 64
    /// How many times a source must be decoded at one size before the decoded image is kept in
    /// the memory cache (default 2, as nginx's `proxy_cache_min_uses`; 1 keeps every decode):
    /// a size asked for once, as most of an image proxy's are, takes no room there, and one
    /// asked for again in another format, quality or operation is kept from its second decode.
    public var memoryCacheMinimumUses = 2
    /// The bytes of encoded results kept in memory, in MiB (default 32): a warm request is
    /// answered from there with no decode and no encode.
    public var responseCacheMegabytes = 32
    /// The disk cache's folder (default: the user cache folder, namespace "serve").
    public var cacheDirectory: String?
    /// A fleet's shared cache tier, `memcached://host:port,...` (WebImageMemcached).
    public var sharedCache: String?
    /// A folder whose files are served as `local:///PATH` sources (nil, the default: no local
    /// file is served). No path leaves it: `..` and symbolic links are resolved first.
    public var fileRoot: String?

    /// Whether sources are decoded in sandboxed worker processes (default true): a decoder
    /// that crashes, never returns or balloons on a stranger's file ends its worker and fails
    /// that request (422, or 504 past `decodeTimeoutSeconds`), and nothing else notices
    /// (DocC "Decoding untrusted images"). The program must call
    /// `DecodingWorker.runIfRequested()` in its `main`, as `webimage` does.
    public var isolation = true
    /// How many decoding workers run (default nil: one per core).
    public var decodingWorkers: Int?
    /// The memory one decode may take in its worker, in MiB (default 1024): its address-space
    /// limit beyond what the worker maps at start.
    public var decodingWorkerMemoryMegabytes = 1024
    /// How long one decode may take in its worker, wall clock and CPU (default 10 s); then the
    /// worker is killed and the request gets a 504.
    public var decodeTimeoutSeconds = 10.0
    /// The program started as a decoding worker (default nil: this program).
    public var decodingWorkerExecutable: String?
    /// Whether PDF sources are drawn (their first page, or `pg:`), when the program registers
    /// the `WebImagePDF` coder (default false: a PDF source is refused with 415). A stranger's
    /// PDF can take a long time to draw: turn it on with `isolation`, which draws it in a worker.
    public var pdf = false

    /// The defaults.
    public init() {}

    /// The decoding worker pool's configuration of these settings.
    var decodingWorkerPool: DecodingWorkerPool.Configuration {
        var pool = DecodingWorkerPool.Configuration()
        if let decodingWorkers { pool.workerCount = max(1, decodingWorkers) }
        pool.memoryLimit = max(16, decodingWorkerMemoryMegabytes) << 20
        pool.timeLimit = .milliseconds(Int(max(0.001, decodeTimeoutSeconds) * 1000))
        pool.cpuTimeLimit = .seconds(max(1, Int(decodeTimeoutSeconds.rounded(.up))))
        if let decodingWorkerExecutable { pool.executable = decodingWorkerExecutable }
        return pool
    }

    /// Reads `data` as JSON; missing keys keep their defaults.
    /// - Throws: `ServerConfigurationError` naming the problem.
    public static func decode(_ data: Data) throws -> ServerConfiguration {
        do {
            return try JSONDecoder().decode(ServerConfiguration.self, from: data)
        } catch let error as DecodingError {
            throw ServerConfigurationError("the configuration is not valid JSON of the expected keys: \(error)")
        }
    }

    private enum CodingKeys: String, CodingKey {
        case host, port, key, salt, insecure, allowedSources, allowedNetworks, maximumSourceBytes,
             maximumDimension, maximumFrames, maximumSourceMegapixels, maximumResultMegapixels, processingMemoryMegabytes, processingTimeoutSeconds, maximumPendingRequests, maximumConcurrentLoads, idleTimeoutSeconds,
             maximumConnections, stopTimeoutSeconds, autoFormats, colorSpace, stripMetadata, keepCopyright, presets, formatQuality, watermark, fallbackImage, fallbackImageStatus, cacheMaxAgeSeconds, cachePolicy,
             memoryCacheMegabytes, memoryCacheMinimumUses, responseCacheMegabytes, cacheDirectory, sharedCache, fileRoot, isolation, decodingWorkers,
             decodingWorkerMemoryMegabytes, decodeTimeoutSeconds, decodingWorkerExecutable, pdf
    }

    /// Decodes the keys present; the others keep their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T { try container.decodeIfPresent(T.self, forKey: key) ?? fallback }
        let defaults = ServerConfiguration()
        host = try value(.host, defaults.host)
        port = try value(.port, defaults.port)
        key = try container.decodeIfPresent(String.self, forKey: .key)
        salt = try container.decodeIfPresent(String.self, forKey: .salt)
        insecure = try value(.insecure, defaults.insecure)
        allowedSources = try value(.allowedSources, defaults.allowedSources)
        allowedNetworks = try value(.allowedNetworks, defaults.allowedNetworks)
        maximumSourceBytes = try value(.maximumSourceBytes, defaults.maximumSourceBytes)
        maximumDimension = try value(.maximumDimension, defaults.maximumDimension)
        maximumFrames = try value(.maximumFrames, defaults.maximumFrames)
        maximumSourceMegapixels = try value(.maximumSourceMegapixels, defaults.maximumSourceMegapixels)
        maximumResultMegapixels = try value(.maximumResultMegapixels, defaults.maximumResultMegapixels)
        processingMemoryMegabytes = try value(.processingMemoryMegabytes, defaults.processingMemoryMegabytes)
        processingTimeoutSeconds = try value(.processingTimeoutSeconds, defaults.processingTimeoutSeconds)
        maximumPendingRequests = try value(.maximumPendingRequests, defaults.maximumPendingRequests)
        maximumConcurrentLoads = try value(.maximumConcurrentLoads, defaults.maximumConcurrentLoads)
        idleTimeoutSeconds = try value(.idleTimeoutSeconds, defaults.idleTimeoutSeconds)
        maximumConnections = try container.decodeIfPresent(Int.self, forKey: .maximumConnections)
        stopTimeoutSeconds = try value(.stopTimeoutSeconds, defaults.stopTimeoutSeconds)
        autoFormats = try value(.autoFormats, defaults.autoFormats)
        if let text = try container.decodeIfPresent(String.self, forKey: .colorSpace) {
            guard let space = ImageColorSpace(rawValue: text.lowercased()) else {
                throw DecodingError.dataCorruptedError(forKey: .colorSpace, in: container, debugDescription: "colorSpace is srgb or original, not \"\(text)\"")
            }
            colorSpace = space
        } else {
            colorSpace = defaults.colorSpace
        }
        stripMetadata = try value(.stripMetadata, defaults.stripMetadata)
        keepCopyright = try value(.keepCopyright, defaults.keepCopyright)
        presets = try value(.presets, defaults.presets)
        formatQuality = try value(.formatQuality, defaults.formatQuality)
        watermark = try container.decodeIfPresent(String.self, forKey: .watermark)
        fallbackImage = try container.decodeIfPresent(String.self, forKey: .fallbackImage)
        fallbackImageStatus = try value(.fallbackImageStatus, defaults.fallbackImageStatus)
        cacheMaxAgeSeconds = try value(.cacheMaxAgeSeconds, defaults.cacheMaxAgeSeconds)
        switch try container.decodeIfPresent(String.self, forKey: .cachePolicy)?.lowercased() {
        case nil, "respect", "shared": cachePolicy = .respectHeaders
        case "ignore": cachePolicy = .ignoreHeaders
        case let other?:
            throw DecodingError.dataCorruptedError(forKey: .cachePolicy, in: container,
                                                   debugDescription: "cachePolicy is respect or ignore, not \"\(other)\"")
        }
        memoryCacheMegabytes = try value(.memoryCacheMegabytes, defaults.memoryCacheMegabytes)
        memoryCacheMinimumUses = try value(.memoryCacheMinimumUses, defaults.memoryCacheMinimumUses)
        responseCacheMegabytes = try value(.responseCacheMegabytes, defaults.responseCacheMegabytes)
        cacheDirectory = try container.decodeIfPresent(String.self, forKey: .cacheDirectory)
        sharedCache = try container.decodeIfPresent(String.self, forKey: .sharedCache)
        fileRoot = try container.decodeIfPresent(String.self, forKey: .fileRoot)
        isolation = try value(.isolation, defaults.isolation)
        decodingWorkers = try container.decodeIfPresent(Int.self, forKey: .decodingWorkers)
        decodingWorkerMemoryMegabytes = try value(.decodingWorkerMemoryMegabytes, defaults.decodingWorkerMemoryMegabytes)
        decodeTimeoutSeconds = try value(.decodeTimeoutSeconds, defaults.decodeTimeoutSeconds)
        decodingWorkerExecutable = try container.decodeIfPresent(String.self, forKey: .decodingWorkerExecutable)
        pdf = try value(.pdf, defaults.pdf)
    }

    /// The signer of this configuration, or nil when it is `insecure`.
    /// - Throws: `ServerConfigurationError` when the key or salt is missing or not hexadecimal.
    public func signer() throws -> URLSigner? {
        if insecure { return nil }
        guard let key, let salt else {
            throw ServerConfigurationError("a signing key and salt are required (key and salt in the configuration, or WEBIMAGE_KEY and WEBIMAGE_SALT; --insecure for development)")
        }
        guard let keyBytes = URLSigner.bytes(hex: key), let saltBytes = URLSigner.bytes(hex: salt) else {
            throw ServerConfigurationError("the signing key and salt must be hexadecimal")
        }
        return URLSigner(key: keyBytes, salt: saltBytes)
    }

    /// The allowed networks, parsed.
    /// - Throws: `ServerConfigurationError` naming one that is not a network.
    public func networks() throws -> [IPNetwork] {
        try allowedNetworks.map { text in
            guard let network = IPNetwork(text) else { throw ServerConfigurationError("\"\(text)\" in allowedNetworks is not an address or CIDR network") }
            return network
        }
    }
}

/// A configuration that cannot work, and why.
public struct ServerConfigurationError: Error, CustomStringConvertible {
    /// One line.
    public let description: String
    init(_ description: String) { self.description = description }
}

import ArgumentParser
import Foundation
import WebImage

/// `webimage get`: downloads images through the manager (caches included), with a progress bar
/// per transfer, and writes them as curl does: `-o FILE` for one URL, `-O` or `--output-dir`
/// to keep the URLs' names.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download images (memory, disk, then network), optionally resized and re-encoded.",
        discussion: """
            -o FILE writes that file (one URL; - is standard output; an existing folder, or a \
            name ending in /, keeps the URL's name in it). -O keeps the URLs' names in the \
            current folder, --output-dir DIR in DIR (created). Without any of them the files go \
            into the current folder. The output format is --format, else the -o file's \
            extension, else the source's. --resize 320x240 fits within the box (aspect ratio \
            kept, no padding); 320 or x240 fixes one side; --mode fill, fillcrop or pad fits \
            otherwise. Prints where each image came from. Exits 1 when any URL fails, 130/143/129 \
            on SIGINT/SIGTERM/SIGHUP (no partial files are left).
            """
    )

    @Argument(help: "Image URLs (http, https, file or data).")
    var urls: [String]

    @Option(name: .shortAndLong, help: "The file to write (one URL), - for standard output, or an existing folder.")
    var output: String?

    @Flag(name: [.customShort("O"), .customLong("remote-name")], help: "Keep each URL's file name (in the current folder or --output-dir).")
    var remoteName = false

    @Option(help: "The folder to write into, keeping each URL's name (created when missing).")
    var outputDir: String?

    @Option(help: "Resize: WxH fits within the box; W or xH fixes one side (e.g. 320x240, 320, x240).")
    var resize: String?

    @Option(help: "How --resize fits a WxH box: fit (within, the default), fill (stretch), fillcrop (cover and crop) or pad (within, padded).")
    var mode: ResizeSpec.Mode = .fit

    @Option(help: "Re-encode as jpg, jpeg, png, webp or gif (default: the -o file's extension, else the source format).")
    var format: OutputFormat?

    @Option(help: "Give up on a URL after this many seconds in all (as curl's --max-time).")
    var maxTime: Double?

    @Option(help: "Try a URL up to this many more times after a transient failure (timeout, reset, 408, 429, 5xx), as curl's --retry.")
    var retries: Int = 0

    @Option(help: "Start at most N new downloads a second after a burst of 25 (N/s or N; 0: no limit).")
    var rateLimit: RateLimitOption = RateLimitOption(argument: "80")!

    @Option(help: "A fleet's shared cache tier behind the disk cache: memcached://HOST:PORT,HOST:PORT (the port defaults to 11211). An unreachable node is a miss, not an error.")
    var sharedCache: SharedCacheOption?

    @Flag(help: "Print each download's timings (queue, DNS, connect, TLS, first byte, total), bytes, connection reuse and HTTP version.")
    var verbose = false

    @Flag(help: "Decode while downloading and report progressive previews.")
    var progressive = false

    @Option(help: CachePolicyOption.help)
    var cachePolicy: CachePolicyOption = .respect

    @Flag(help: "Neither read nor write the caches.")
    var noCache = false

    @Option(help: "The cache namespace: a plain name (no '/', no leading dot).")
    var namespace: String = "cli"

    func validate() throws {
        if let resize { _ = try ResizeSpec(parsing: resize) }
        if let problem = Deadline.validate(maxTime) { throw ValidationError.sentence(problem) }
        if let problem = Retries.validate(retries) { throw ValidationError.sentence(problem) }
        try CacheNamespace.validate(namespace)
        if let output, case .file = OutputTarget.of(output, outputDir: outputDir), urls.count > 1 {
            throw ValidationError.sentence("-o \(output) names one file, but \(urls.count) URLs were given: use --output-dir DIR or -O to keep their names")
        }
        if remoteName, let output, case .file = OutputTarget.of(output, outputDir: outputDir) {
            throw ValidationError.sentence("-O keeps the URLs' names: it cannot be combined with -o \(output)")
        }
    }

    func run() async throws {
        let target = output.map { OutputTarget.of($0, outputDir: outputDir) } ?? .folder(outputDir ?? ".")
        if case .folder(let folder) = target {
            do {
                if outputDir != nil, output == nil { try OutputFile.makeFolder(folder) }
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw CLIError("cannot write into \(folder): no such folder (--output-dir creates it)")
                }
            } catch {
                Terminal.error(Terminal.describe(error))
                throw ExitCode(1)
            }
        }
        let cache = try SharedCacheOption.cache(ImageCache(namespace: namespace), tier: sharedCache)
        var configuration = rateLimit.configuration
        configuration.defaultContext.httpCachePolicy = cachePolicy.policy
        let manager = ImageManager(cache: cache, configuration: configuration)
        // The process ends right after: disk writes must be done before it does.
        var options: ImageOptions = .waitStoreCache
        var context = ImageContext()
        if progressive { options.insert(.progressiveLoad) }
        if noCache {
            options.insert(.fromLoaderOnly)
            context.storeCacheType = ImageCacheType.none
        }
        if let resize, let spec = try? ResizeSpec(parsing: resize) {
            context.transformer = spec.transformer(mode)
            // Every frame of an animation is resized (SDWebImage leaves animations alone unless asked).
            options.insert(.transformAnimatedImage)
            // A new size of an image fetched before is made from the cached original.
            if !noCache { context.originalQueryCacheType = .disk }
        }
        context = Retries.context(context, retries)
        let jobs = OutputNames.assign(urls, target: target, format: format?.imageFormat)
        let display = ProgressDisplay(silent: target == .file("-"))
        let loadOptions = options, loadContext = context, deadline = maxTime, verbose = self.verbose
        let failures = try await Interrupt.run {
            await withTaskGroup(of: Bool.self) { group in
                for job in jobs {
                    group.addTask {
                        await Download(job: job, manager: manager, options: loadOptions, context: loadContext,
                                       deadline: deadline, verbose: verbose, display: display).run()
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 0 : 1) }
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }
}

/// Where `get` writes.
enum OutputTarget: Sendable, Equatable {
    /// This one file (or `-`, standard output).
    case file(String)
    /// Into this folder, under each URL's own name.
    case folder(String)

    /// What `-o value` means: an existing folder or a name ending in `/` is a folder; anything
    /// else a file, inside `outputDir` when it is relative and one is given.
    static func of(_ value: String, outputDir: String?) -> OutputTarget {
        var isDirectory: ObjCBool = false
        if value.hasSuffix("/") || (FileManager.default.fileExists(atPath: value, isDirectory: &isDirectory) && isDirectory.boolValue) {
            return .folder(value)
        }
        if let outputDir, value != "-", !value.hasPrefix("/") { return .file(outputDir + "/" + value) }
        return .file(value)
    }
}

/// The URL to load, where its image goes, and in which format.
struct OutputJob: Sendable {
    /// The URL as given.
    let text: String
    let target: Target
    /// The format asked for (--format, or the -o file's extension); nil keeps the source's.
    let format: ImageFormat?

    /// A file, or a folder with the name to use there (without its extension).
    enum Target: Sendable {
        case file(String)
        case folder(URL, stem: String)
    }

    /// The path for an image encoded as `format`.
    func destination(_ format: ImageFormat) -> String {
        switch target {
        case .file(let path): path
        case .folder(let folder, let stem): folder.appendingPathComponent("\(stem).\(format.fileExtension)").path
        }
    }
}

/// Output names: the URL's last path component without its extension ("image" for data URLs
/// and the like), made unique within one run.
enum OutputNames {
    static func assign(_ urls: [String], target: OutputTarget, format: ImageFormat?) -> [OutputJob] {
        switch target {
        case .file(let path):
            let byExtension = path == "-" ? nil : ImageFormat(fileExtension: URL(fileURLWithPath: path).pathExtension)
            return urls.map { OutputJob(text: $0, target: .file(path), format: format ?? byExtension) }
        case .folder(let folder):
            var used: Set<String> = []
            return urls.map { text in
                let url = URL(string: text)
                let hierarchical = url.map { $0.scheme != "data" && !$0.path.isEmpty } ?? false
                var stem = hierarchical ? (url!.lastPathComponent as NSString).deletingPathExtension : "image"
                if stem.isEmpty || stem == "/" || stem.hasPrefix(".") || stem.count > 200 { stem = "image" }
                var name = stem, n = 1
                while used.contains(name) {
                    name = "\(stem)-\(n)"
                    n += 1
                }
                used.insert(name)
                return OutputJob(text: text, target: .folder(URL(fileURLWithPath: folder), stem: name), format: format)
            }
        }
    }
}

/// One URL of `get`: load with progress, encode, write atomically, report.
struct Download: Sendable {
    let job: OutputJob
    let manager: ImageManager
    let options: ImageOptions
    let context: ImageContext
    let deadline: Double?
    /// Print the transfer's metrics.
    let verbose: Bool
    let display: ProgressDisplay

    /// Whether it succeeded.
    func run() async -> Bool {
        let bar = display.add(job.text)
        let start = ContinuousClock.now
        do {
            guard let url = URL(string: job.text) else { throw ImageError.invalidURL(job.text) }
            var loaded: ImageResult?
            do {
                for try await event in manager.events(for: url, options: options, context: Deadline.context(context, deadline)) {
                    switch event {
                    case .progress(let progress): display.update(bar, progress)
                    case .preview(let preview):
                        display.note(bar, String(format: "preview: %d%% of rows, scan %d", Int(preview.fractionDecoded * 100), preview.scans))
                    case .cached: break
                    case .finished(let finished): loaded = finished
                    }
                }
            } catch {
                throw Deadline.explain(error, seconds: deadline, elapsed: ContinuousClock.now - start, what: "loading \(job.text)")
            }
            try Task.checkCancellation()
            guard let result = loaded else { throw CancellationError() }
            let elapsed = ContinuousClock.now - start
            let (bytes, target, note) = try encode(result)
            let destination = job.destination(target)
            try Task.checkCancellation()
            try OutputFile.write(bytes, to: destination)
            let image = result.image
            let shown = destination == "-" ? "standard output" : destination
            if verbose, let metrics = result.transferMetrics { display.note(bar, Download.describe(metrics)) }
            display.finish(bar, "\(image.width)x\(image.height) \(image.format), \(Terminal.bytes(Int64(bytes.count))) from "
                           + "\(source(result.cacheType, url)) in \(Terminal.duration(elapsed)) -> \(shown)")
            if let note { Terminal.error("note: \(job.text): \(note)") }
            return true
        } catch {
            display.finish(bar, "failed")
            if !(error is CancellationError) {
                // A write failure names the file, most load failures the URL; others get the URL in front.
                let message = Terminal.describe(error)
                Terminal.error(error is CLIError || message.contains(job.text) ? message : "\(job.text): \(message)")
            }
            return false
        }
    }

    /// One line of a transfer's metrics, as `--verbose` prints it (curl's `--write-out` timings).
    static func describe(_ metrics: TransferMetrics) -> String {
        func ms(_ duration: Duration) -> String {
            String(format: "%.1f ms", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
        }
        return "queued \(ms(metrics.queued)), dns \(ms(metrics.nameLookup)), connect \(ms(metrics.connect)), "
            + "tls \(ms(metrics.tlsHandshake)), first byte \(ms(metrics.firstByte)), total \(ms(metrics.total)); "
            + "\(Terminal.bytes(metrics.bytesReceived)), HTTP/\(metrics.httpVersion), "
            + (metrics.reusedConnection ? "reused connection" : "new connection")
            + (metrics.redirects > 0 ? ", \(metrics.redirects) redirect(s)" : "")
    }

    /// Where the image came from: memory, disk, or the network (file and data URLs name their scheme).
    private func source(_ type: ImageCacheType, _ url: URL) -> String {
        guard type == .none else { return Terminal.source(type) }
        let scheme = url.scheme?.lowercased() ?? ""
        return scheme == "http" || scheme == "https" ? "network" : "\(scheme) URL"
    }

    /// The bytes to write: the downloaded ones when nothing changed, else a fresh encoding.
    private func encode(_ result: ImageResult) throws -> (Data, ImageFormat, String?) {
        let source = result.image.format
        let target = job.format ?? (source.isDecodable ? source : .png)
        if let data = result.data, target == source, context.transformer == nil { return (data, target, nil) }
        let encoded = try OutputEncoding.encode(result.image, as: target)
        return (encoded.data, target, encoded.note)
    }
}

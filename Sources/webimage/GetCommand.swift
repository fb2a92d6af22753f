import ArgumentParser
import Foundation
import WebImage

/// `webimage get`: downloads images through the manager (caches included), with a progress bar
/// per transfer, and writes them to a folder.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download images (memory, disk, then network), optionally resized and re-encoded, into a folder.",
        discussion: "Prints where each image came from. Exits 1 when any URL fails, 130 on Ctrl-C (no partial files are left)."
    )

    /// How `--resize` fits the image in the box.
    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case fill, fit, fillcrop
        var scaleMode: ResizingTransformer.ScaleMode {
            switch self {
            case .fill: .fill
            case .fit: .aspectFit
            case .fillcrop: .aspectFill
            }
        }
    }

    /// Output formats.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case png, jpeg, webp
        var imageFormat: ImageFormat {
            switch self {
            case .png: .png
            case .jpeg: .jpeg
            case .webp: .webp
            }
        }
    }

    @Argument(help: "Image URLs (http, https, file or data).")
    var urls: [String]

    @Option(name: .shortAndLong, help: "The folder to write into (default: the current folder).")
    var output: String = "."

    @Option(help: "Resize to WxH pixels, e.g. 320x240.")
    var resize: String?

    @Option(help: "How --resize fits the image: fill (stretch), fit (inside) or fillcrop (cover and crop).")
    var mode: Mode = .fit

    @Option(help: "Re-encode as png, jpeg or webp (default: the source format).")
    var format: Format?

    @Flag(help: "Decode while downloading and report progressive previews.")
    var progressive = false

    @Flag(help: "Neither read nor write the caches.")
    var noCache = false

    @Option(help: "The cache namespace.")
    var namespace: String = "cli"

    func validate() throws {
        if let resize, ResizeBox(resize) == nil { throw ValidationError("--resize must look like 320x240") }
    }

    func run() async throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory), isDirectory.boolValue else {
            Terminal.error("\(output): no such folder")
            throw ExitCode(1)
        }
        let manager = ImageManager(cache: ImageCache(namespace: namespace))
        // The process ends right after: disk writes must be done before it does.
        var options: ImageOptions = .waitStoreCache
        var context = ImageContext()
        if progressive { options.insert(.progressiveLoad) }
        if noCache {
            options.insert(.fromLoaderOnly)
            context.storeCacheType = ImageCacheType.none
        }
        if let resize, let box = ResizeBox(resize) {
            context.transformer = ResizingTransformer(width: Double(box.width), height: Double(box.height), scaleMode: mode.scaleMode)
            // A new size of an image fetched before is made from the cached original.
            if !noCache { context.originalQueryCacheType = .disk }
        }
        let jobs = OutputNames.assign(urls, folder: URL(fileURLWithPath: output))
        let display = ProgressDisplay()
        let loadOptions = options, loadContext = context, outputFormat = format?.imageFormat
        let failures = try await Interrupt.run {
            await withTaskGroup(of: Bool.self) { group in
                for job in jobs {
                    group.addTask {
                        await Download(job: job, manager: manager, options: loadOptions, context: loadContext,
                                       format: outputFormat, display: display).run()
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 0 : 1) }
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }
}

/// A `WxH` size.
struct ResizeBox {
    let width: Int, height: Int
    init?(_ text: String) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0, w <= 20_000, h <= 20_000 else { return nil }
        width = w
        height = h
    }
}

/// The URL to load and the name of the file to write (without its extension: that comes from
/// the output format, or the decoded image's).
struct OutputJob: Sendable {
    let text: String
    let folder: URL
    let stem: String

    /// The file for an image encoded as `format`.
    func destination(_ format: ImageFormat) -> URL { folder.appendingPathComponent("\(stem).\(format.fileExtension)") }

    /// The URL shortened for display.
    var label: String { text.count > 60 ? String(text.prefix(57)) + "..." : text }
}

/// Output names: the URL's last path component without its extension ("image" for data URLs
/// and the like), made unique within one run.
enum OutputNames {
    static func assign(_ urls: [String], folder: URL) -> [OutputJob] {
        var used: Set<String> = []
        return urls.map { text in
            let url = URL(string: text)
            let hierarchical = url.map { $0.scheme != "data" && !$0.path.isEmpty } ?? false
            var stem = hierarchical ? (url!.lastPathComponent as NSString).deletingPathExtension : "image"
            if stem.isEmpty || stem == "/" || stem.count > 200 { stem = "image" }
            var name = stem, n = 1
            while used.contains(name) {
                name = "\(stem)-\(n)"
                n += 1
            }
            used.insert(name)
            return OutputJob(text: text, folder: folder, stem: name)
        }
    }
}

/// One URL of `get`: load with progress, encode, write atomically, report.
struct Download: Sendable {
    let job: OutputJob
    let manager: ImageManager
    let options: ImageOptions
    let context: ImageContext
    let format: ImageFormat?
    let display: ProgressDisplay

    /// Whether it succeeded.
    func run() async -> Bool {
        let bar = display.add(job.label)
        let start = ContinuousClock.now
        do {
            guard let url = URL(string: job.text) else { throw ImageError.invalidURL(job.text) }
            var result: ImageResult?
            for try await event in manager.events(for: url, options: options, context: context) {
                switch event {
                case .progress(let progress): display.update(bar, progress)
                case .preview(let preview):
                    display.note(bar, String(format: "preview: %d%% of rows, scan %d", Int(preview.fractionDecoded * 100), preview.scans))
                case .finished(let finished): result = finished
                }
            }
            try Task.checkCancellation()
            guard let result else { throw CancellationError() }
            let elapsed = ContinuousClock.now - start
            let (bytes, target) = try encode(result)
            let destination = job.destination(target)
            try Task.checkCancellation()
            do { try bytes.write(to: destination, options: .atomic) } catch {
                throw CLIError("cannot write \(destination.path): \((error as NSError).localizedDescription)")
            }
            let image = result.image
            display.finish(bar, "\(image.width)x\(image.height) \(image.format), \(Terminal.bytes(Int64(bytes.count))) from "
                           + "\(source(result.cacheType, url)) in \(Terminal.duration(elapsed)) -> \(destination.path)")
            return true
        } catch {
            display.finish(bar, "failed")
            if !(error is CancellationError) { Terminal.error("\(job.label): \(Terminal.describe(error))") }
            return false
        }
    }

    /// Where the image came from: memory, disk, or the network (file and data URLs name their scheme).
    private func source(_ type: ImageCacheType, _ url: URL) -> String {
        guard type == .none else { return Terminal.source(type) }
        let scheme = url.scheme?.lowercased() ?? ""
        return scheme == "http" || scheme == "https" ? "network" : "\(scheme) URL"
    }

    /// The bytes to write: the downloaded ones when nothing changed, else a fresh encoding.
    private func encode(_ result: ImageResult) throws -> (Data, ImageFormat) {
        let source = result.image.format
        let target = format ?? (source.isDecodable ? source : .png)
        if let data = result.data, target == source, context.transformer == nil { return (data, target) }
        return (try result.image.encoded(as: target), target)
    }
}

/// A failure described in one line.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

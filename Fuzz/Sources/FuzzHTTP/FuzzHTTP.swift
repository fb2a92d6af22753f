import Foundation
import FuzzSupport
import WebImage

/// The server that sends each input as the response, and a manager that caches nothing, never
/// blacklists and gives up after 2 s of silence.
let server = ReplayServer()
let manager: ImageManager = {
    var configuration = HTTPImageLoader.Configuration()
    configuration.timeout = .seconds(2)
    configuration.maximumResponseSize = 4 << 20
    return ImageManager(cache: ImageCache(memory: MemoryCache(), disk: DiskCache(directory: folder)),
                        loaders: ImageLoaders([HTTPImageLoader(configuration: configuration)]))
}()

let folder = URL(fileURLWithPath: "/tmp/webimage-fuzz-http-\(getpid())")
let url = URL(string: "http://127.0.0.1:\(server.port)/image")!
let cachedImage = try! Image(bitmap: Bitmap(width: 2, height: 2, rgba: [UInt8](repeating: 200, count: 16))).encoded(as: .png)

/// Puts a cache entry for `url` in place, with `metadata` as its extended data: in the
/// extended attribute the cache uses (written by a second cache over the same folder), or in its
/// hidden side file, written raw.
func plantEntry(metadata: Data, inSideFile: Bool) async {
    let planter = DiskCache(directory: folder, configuration: .init(cleanupInterval: nil, usesExtendedAttributes: !inSideFile))
    try? await planter.store(cachedImage, forKey: url.absoluteString)
    let side = folder.appendingPathComponent(".ext-" + DiskCache.fileName(forKey: url.absoluteString)).path
    if inSideFile {
        _ = FileManager.default.createFile(atPath: side, contents: metadata)
    } else {
        try? await planter.setExtendedData(metadata, forKey: url.absoluteString)
    }
}

/// libFuzzer's entry: the input is a whole HTTP response (status line, headers, body) read by
/// libcurl and then by the manager: header parsing, status and content-type checks, lying
/// lengths, chunked and compressed bodies, progressive decoding of whatever arrives.
/// The first byte picks the options: progressive, scaled down, and "cached": then the next byte
/// is a length N, the N bytes after it become the extended data of a cached entry (in an
/// extended attribute or a side file), and the load revalidates it (`.refreshCached`: the
/// stored validators are parsed and sent, and a 304 serves the entry).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 1 else { return 0 }
    let flags = bytes[0]
    var offset = 1
    var options: ImageOptions = [.retryFailed]
    var planted: Data?
    if flags & 4 != 0, count > 2 {
        let length = min(Int(bytes[1]), count - 2)
        planted = Fuzz.data(bytes + 2, length)
        offset = 2 + length
        options.insert(.refreshCached)
    } else {
        options.insert(.fromLoaderOnly)
    }
    server.answer(with: Fuzz.data(bytes + offset, count - offset))
    if flags & 1 != 0 { options.insert(.progressiveLoad) }
    if flags & 2 != 0 { options.insert(.scaleDownLargeImages) }
    var context = ImageContext()
    context.storeCacheType = ImageCacheType.none
    context.scaleDownLimitBytes = 16 << 20
    let done = DispatchSemaphore(value: 0)
    Task {
        if let planted { await plantEntry(metadata: planted, inSideFile: flags & 8 != 0) }
        if flags & 1 != 0 {
            do { for try await _ in manager.events(for: url, options: options, context: context) {} } catch {}
        } else {
            _ = try? await manager.image(for: url, options: options, context: context)
        }
        done.signal()
    }
    done.wait()
    return 0
}

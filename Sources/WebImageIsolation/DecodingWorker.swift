import CWebImageIsolation
import Foundation
import WebImage

/// The worker side of `DecodingWorkerPool`: the same executable, started by the pool with a
/// mark in its environment, decodes what the pool sends and nothing else.
///
/// Call `runIfRequested(coders:)` first thing in `main`, after registering coder plug-ins and
/// before anything else starts (as Chromium's single binary does): in a worker it never
/// returns, elsewhere it returns at once.
///
/// ```swift
/// @main struct Service {
///     static func main() async throws {
///         AVIFCoder.register()
///         DecodingWorker.runIfRequested()
///         // ... the service itself
///     }
/// }
/// ```
public enum DecodingWorker {
    /// The environment variable that marks a worker; its value is the worker's memory limit in
    /// bytes.
    static let environmentKey = "WEBIMAGE_DECODING_WORKER"
    /// The descriptor of the worker's socket to its pool.
    static let socket: Int32 = 3
    /// The largest request message.
    static let maximumRequestBytes = 4096

    /// When this process was started as a decoding worker, decodes with `coders` until its pool
    /// goes away, then exits; otherwise returns at once.
    public static func runIfRequested(coders: ImageCoders = .shared) {
        guard let mark = ProcessInfo.processInfo.environment[environmentKey], let memoryLimit = UInt64(mark) else { return }
        warmUp(coders)
        // A worker's blocks of 16 MiB or more (a progressive JPEG's coefficients, a large
        // image decoded whole) are returned when freed, instead of raising glibc's thresholds
        // so that it keeps that much between decodes; smaller buffers are reused. An explicit
        // MALLOC_MMAP_THRESHOLD_ in the environment wins.
        if ProcessInfo.processInfo.environment["MALLOC_MMAP_THRESHOLD_"] == nil { _ = wi_isolation_fix_malloc_thresholds(16 << 20) }
        // The address space it has now (the runtime, the libraries, their reservations) plus
        // what a decode may take.
        let baseline = wi_isolation_address_space()
        let status = wi_isolation_lock_down(memoryLimit > 0 && baseline > 0 ? baseline + memoryLimit : 0)
        guard status == 0 else {
            FileHandle.standardError.write(Data("webimage decoding worker: could not lock itself down (errno \(status))\n".utf8))
            exit(3)
        }
        let ready = ByteWriter.ready
        guard ready.withUnsafeBytes({ wi_isolation_send(socket, $0.baseAddress, $0.count, -1) }) == 0 else { exit(0) }
        serve(coders)
    }

    /// Decodes a tiny image of each format the registry writes, and an SVG with text, so that
    /// every library loads what it loads lazily (plug-in modules, font configuration) while
    /// files may still be opened.
    private static func warmUp(_ coders: ImageCoders) {
        let pixel = Image(bitmap: Bitmap(width: 2, height: 2, rgba: [UInt8](repeating: 128, count: 16)))
        for format in [ImageFormat.png, .jpeg, .webp, .gif, .avif, .heic, .jxl, .tiff, .bmp, .ico] {
            guard let data = try? coders.encode(pixel, as: format, options: ImageEncodingOptions(quality: 0.5, effort: 0)) else { continue }
            _ = try? coders.decode(data, options: ImageDecodingOptions(), context: ImageContext())
        }
        // Text in the common faces of each generic family: fontconfig and FreeType open a
        // font's file when it is first drawn, and an unknown family falls back to one of these.
        // Eight, because cairo keeps at most ten font files open: a face it closes cannot be
        // opened again once the worker is locked down (its text is then drawn in one that is).
        let faces = [("sans-serif", "normal", "normal"), ("sans-serif", "bold", "normal"), ("sans-serif", "normal", "italic"),
                     ("sans-serif", "bold", "italic"), ("serif", "normal", "normal"), ("serif", "bold", "normal"),
                     ("monospace", "normal", "normal"), ("monospace", "bold", "normal")]
        let text = faces.map { family, weight, style in
            #"<text y="9" font-family="\#(family)" font-weight="\#(weight)" font-style="\#(style)" font-size="9">a0</text>"#
        }.joined()
        let svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="10">"# + text + "</svg>"
        _ = try? coders.decode(Data(svg.utf8), options: ImageDecodingOptions(), context: ImageContext())
    }

    private static func serve(_ coders: ImageCoders) -> Never {
        var buffer = [UInt8](repeating: 0, count: maximumRequestBytes)
        var input = InputMapping()
        while true {
            var length = 0, fd: Int32 = -1
            let status = buffer.withUnsafeMutableBytes { wi_isolation_receive(socket, $0.baseAddress, $0.count, &length, &fd, -1) }
            guard status == 0, length > 0 else { exit(0) }   // the pool closed its end (or broke it)
            guard let request = WorkerRequest(parsing: buffer[..<length]), fd >= 0 else { exit(2) }
            let reply = decode(request, from: fd, input: &input, coders: coders)
            close(fd)
            let sent = reply.message.withUnsafeBytes { wi_isolation_send(socket, $0.baseAddress, $0.count, reply.pixels) }
            if reply.pixels >= 0 { close(reply.pixels) }
            guard sent == 0 else { exit(0) }
        }
    }

    /// Writes `bytes` at `offset` of the file, through interrupted and partial writes.
    private static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var done = 0
        while done < bytes.count {
            let wrote = pwrite(fd, base + done, bytes.count - done, off_t(offset + done))
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else { return false }
            done += wrote
        }
        return true
    }

    /// One decode: the reply's bytes and its pixel file (-1 with an error).
    private static func decode(_ request: WorkerRequest, from fd: Int32, input: inout InputMapping,
                               coders: ImageCoders) -> (message: [UInt8], pixels: Int32) {
        guard request.dataLength > 0 else { return (WorkerReply.message(.emptyData), -1) }
        guard let mapped = input.bytes(of: fd, count: request.dataLength) else {
            return (WorkerReply.message(.undecodable(.unknown, reason: "the worker could not map the data")), -1)
        }
        _ = wi_isolation_limit_cpu(max(1, request.cpuSeconds))
        let image: Image, frames: [ImageFrame]
        do {
            // Every frame is decoded before the reply: nothing reads the data after it, when the
            // pool writes the next request's data into the same file.
            let data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: mapped), count: request.dataLength, deallocator: .none)
            image = try coders.decode(data, options: request.options, context: ImageContext())
            // Every frame goes back at once: they count against the pixel limit together.
            let (pixels, overflow) = (image.width * image.height).multipliedReportingOverflow(by: image.frameCount)
            if image.frameCount > 1, overflow || pixels > request.options.pixelLimit {
                throw ImageError.animationTooLarge(width: image.width, height: image.height, frames: image.frameCount,
                                                   limit: request.options.pixelLimit)
            }
            frames = try image.allFrames()
        } catch let error as ImageError {
            return (WorkerReply.message(error), -1)
        } catch {
            return (WorkerReply.message(.undecodable(.unknown, reason: "\(error)")), -1)
        }
        let described = WorkerReply.Decoded(width: image.width, height: image.height, durations: frames.map(\.duration),
                                            loopCount: image.declaredLoopCount, format: image.format,
                                            exifOrientation: image.exifOrientation, orientationApplied: image.isOrientationApplied,
                                            premultiplied: image.bitmap.isPremultiplied, colorInfo: image.colorInfo,
                                            deep: image.bitmap.pixelFormat == .rgba16)
        let frameBytes = image.width * image.height * image.bitmap.pixelFormat.bytesPerPixel
        guard frames.allSatisfy({ $0.bitmap.width == image.width && $0.bitmap.height == image.height
                                  && $0.bitmap.pixelFormat == image.bitmap.pixelFormat }) else {
            return (WorkerReply.message(.undecodable(image.format, reason: "the frames differ in size")), -1)
        }
        let tail = described.tail
        let fileBytes = described.pixelBytes + tail.count
        let fd = wi_isolation_memfd("webimage-pixels", UInt64(fileBytes))
        guard fd >= 0 else {
            return (WorkerReply.message(.undecodable(image.format, reason: "the worker could not hold the decoded pixels")), -1)
        }
        // Written, not mapped: the file's new pages are filled by the copy instead of cleared
        // first, and the worker's page tables are left alone.
        var written = true
        for (index, frame) in frames.enumerated() where written {
            written = frame.bitmap.withUnsafeBytes { Self.write(fd, UnsafeRawBufferPointer(rebasing: $0[..<frameBytes]), at: index * frameBytes) }
        }
        if written { written = tail.withUnsafeBytes { Self.write(fd, $0, at: described.pixelBytes) } }
        guard written else {
            close(fd)
            return (WorkerReply.message(.undecodable(image.format, reason: "the worker could not hold the decoded pixels")), -1)
        }
        // Its size can no longer change: the pool maps it, and keeps the mapping as the pixels.
        guard wi_isolation_seal_size(fd) == 0 else {
            close(fd)
            return (WorkerReply.message(.undecodable(image.format, reason: "the worker could not seal the decoded pixels")), -1)
        }
        return (WorkerReply.message(described), fd)
    }
}

/// The pool's input file as the worker maps it, kept from one request to the next: the pool
/// writes each request's data into the same file (its size changes only between requests), so
/// its pages are mapped once instead of for every decode.
struct InputMapping: ~Copyable {
    private var base: UnsafeMutableRawPointer?
    private var length = 0
    private var device: UInt64 = 0, inode: UInt64 = 0

    /// The first `count` bytes of the file `fd` reads, mapped read-only: the earlier mapping
    /// when `fd` is the same file, of the same size; nil when the file is shorter or cannot be
    /// mapped.
    mutating func bytes(of fd: Int32, count: Int) -> UnsafeRawPointer? {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size >= count else { return nil }
        let size = Int(info.st_size), sameFile = UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
        if let base, sameFile, length == size { return UnsafeRawPointer(base) }
        release()
        guard let mapped = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), mapped != MAP_FAILED else { return nil }
        (base, length, device, inode) = (mapped, size, UInt64(info.st_dev), UInt64(info.st_ino))
        return UnsafeRawPointer(mapped)
    }

    /// Unmaps the file.
    private mutating func release() {
        if let base { munmap(base, length) }
        (base, length, device, inode) = (nil, 0, 0, 0)
    }

    deinit {
        if let base { munmap(base, length) }
    }
}

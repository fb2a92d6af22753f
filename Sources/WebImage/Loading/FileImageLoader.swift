import Foundation

/// `file:` URLs, read in 64 KiB chunks on a thread of the loader's own (never on the
/// cooperative pool), with progress. Only regular files are read: a folder, a FIFO, a socket or
/// a device fails with `ImageError.unreadableFile` at once (the file is opened without blocking,
/// so a FIFO with no writer cannot hold the loader's thread).
public final class FileImageLoader: ImageLoader {
    /// Local bytes: no rate limiting.
    public var capabilities: ImageLoaderCapabilities { .local }

    private let reader: FileChunkReader

    /// The file loader. Files over `maximumFileSize` bytes (nil, the default: no limit) fail
    /// with `ImageError.responseTooLarge` before any byte is read.
    public init(maximumFileSize: Int? = nil) {
        reader = FileChunkReader(limit: maximumFileSize)
    }

    public func canLoad(_ url: URL) -> Bool { url.isFileURL && !url.path.isEmpty }

    /// Reads the file; with a decryptor on the request, the body is decrypted and delivered in
    /// one piece at the end.
    public func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        let stream = read(request)
        return request.decryptor.map { $0.decrypting(stream, url: request.url) } ?? stream
    }

    private func read(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        let reader = self.reader
        return .produced { continuation in
            try await reader.read(request.url) { event in continuation.yield(event) }
        }
    }
}

/// Reads files on its own thread.
actor FileChunkReader {
    private nonisolated let executor = ThreadExecutor(name: "webimage.file-loader")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let limit: Int?

    init(limit: Int?) { self.limit = limit }

    deinit { executor.stop() }

    func read(_ url: URL, _ emit: (ImageLoaderEvent) -> Void) throws {
        // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; the file's
        // kind is then read from the descriptor itself (no window between a check and the open).
        let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else {
            throw ImageError.unreadableFile(path: url.path, reason: String(cString: strerror(errno)))
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        defer { try? handle.close() }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw ImageError.unreadableFile(path: url.path, reason: String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ImageError.unreadableFile(path: url.path, reason: "it is not a regular file")
        }
        let size = Int64(status.st_size)
        if let limit, size > Int64(limit) { throw ImageError.responseTooLarge(url: url, limit: limit) }
        emit(.response(ImageLoaderResponse(statusCode: 200, headers: [:], expectedContentLength: size, url: url)))
        var received: Int64 = 0
        while true {
            try Task.checkCancellation()
            let chunk: Data
            do { chunk = try handle.read(upToCount: 65_536) ?? Data() } catch {
                throw ImageError.unreadableFile(path: url.path, reason: (error as NSError).localizedDescription)
            }
            if chunk.isEmpty { break }
            received += Int64(chunk.count)
            // A file that grew after it was measured is held to the same limit.
            if let limit, received > Int64(limit) { throw ImageError.responseTooLarge(url: url, limit: limit) }
            emit(.data(chunk))
            emit(.progress(ImageProgress(receivedBytes: received, expectedBytes: size)))
        }
    }
}

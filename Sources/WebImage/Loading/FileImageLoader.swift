import Foundation

/// `file:` URLs, read in 64 KiB chunks on a thread of the loader's own (never on the
/// cooperative pool), with progress.
public final class FileImageLoader: ImageLoader {
    private let reader = FileChunkReader()

    /// The file loader.
    public init() {}

    public func canLoad(_ url: URL) -> Bool { url.isFileURL && !url.path.isEmpty }

    /// Reads the file; with a decryptor on the request, the body is decrypted and delivered in
    /// one piece at the end.
    public func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        let stream = read(request)
        return request.decryptor.map { $0.decrypting(stream, url: request.url) } ?? stream
    }

    private func read(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        let reader = self.reader
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await reader.read(request.url) { event in continuation.yield(event) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// Reads files on its own thread.
actor FileChunkReader {
    private nonisolated let executor = ThreadExecutor(name: "webimage.file-loader")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    deinit { executor.stop() }

    func read(_ url: URL, _ emit: (ImageLoaderEvent) -> Void) throws {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw ImageError.unreadableFile(path: url.path, reason: "it does not exist or cannot be opened")
        }
        defer { try? handle.close() }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
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
            emit(.data(chunk))
            emit(.progress(ImageProgress(receivedBytes: received, expectedBytes: size)))
        }
    }
}

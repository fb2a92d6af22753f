import ExampleSupport
import Foundation
import WebImage

// Two callers of one URL share one transfer. Cancelling one ends only that caller; the transfer
// goes on for the other. A slow loader stands in for a slow server.
// Usage: swift run Cancellation

/// Serves files slowly: 2 KB every 20 ms.
struct SlowFileLoader: ImageLoader {
    func canLoad(_ url: URL) -> Bool { url.isFileURL }

    func load(_ request: ImageLoaderRequest) -> AsyncThrowingStream<ImageLoaderEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let data = try Data(contentsOf: request.url)
                    print("  loader: started \(request.url.lastPathComponent)")
                    continuation.yield(.response(ImageLoaderResponse(statusCode: 200, headers: [:],
                                                                     expectedContentLength: Int64(data.count), url: request.url)))
                    var offset = 0
                    while offset < data.count {
                        try await Task.sleep(for: .milliseconds(20))
                        let end = min(data.count, offset + 2048)
                        continuation.yield(.data(data[offset..<end]))
                        continuation.yield(.progress(ImageProgress(receivedBytes: Int64(end), expectedBytes: Int64(data.count))))
                        offset = end
                    }
                    print("  loader: finished")
                    continuation.finish()
                } catch {
                    print("  loader: stopped (\(error is CancellationError ? "cancelled" : "\(error)"))")
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-cancellation-example")
let manager = ImageManager(cache: ImageCache(namespace: "example", directory: directory), loaders: ImageLoaders([SlowFileLoader()]))
let url = Samples.photo

let first = Task { try await manager.image(for: url) }
let second = Task { try await manager.image(for: url) }
try await Task.sleep(for: .milliseconds(100))
print("cancelling the first caller")
first.cancel()
do { _ = try await first.value } catch { print("first caller: \(error is CancellationError ? "CancellationError" : "\(error)")") }
let image = try await second.value
print("second caller: \(image.width)x\(image.height), one transfer for both")
await manager.cache.clear(.all)

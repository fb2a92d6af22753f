import ExampleSupport
import Foundation
import WebImage

// Iterate the events of one load: progress, progressive previews, then the finished image.
// Usage: swift run ProgressStream [URL]

let url = Samples.arguments(or: [Samples.progressiveJPEG])[0]
var context = ImageContext()
context.previewInterval = .zero
do {
    for try await event in ImageManager.shared.events(for: url, options: [.progressiveLoad, .fromLoaderOnly], context: context) {
        switch event {
        case .progress(let progress):
            let total = progress.expectedBytes.map { " of \($0)" } ?? ""
            print("progress: \(progress.receivedBytes) bytes\(total)")
        case .preview(let preview):
            print("preview: \(preview.image.width)x\(preview.image.height), \(Int(preview.fractionDecoded * 100))% of rows, scan \(preview.scans)")
        case .cached(let result):
            print("cached: \(result.image.width)x\(result.image.height) from \(result.cacheType), refreshing")
        case .finished(let result):
            print("finished: \(result.image.width)x\(result.image.height) from \(result.cacheType)")
        }
    }
} catch {
    print("failed: \(error)")
}

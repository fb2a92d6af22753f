import Foundation
import Testing
@testable import WebImage

/// Progress is never behind the previews: the loader throttles its progress events, but a
/// preview is always preceded by the byte count it was decoded from (the CLI's bar once showed
/// 0 B while previews already showed rows).
@Suite struct ProgressOrderTests {
    @Test func everyPreviewIsPrecededByItsByteCountAndProgressNeverGoesBack() async throws {
        let h = try await ManagerHarness(loaderConfiguration: {
            var c = HTTPImageLoader.Configuration()
            c.minimumProgressInterval = .seconds(30)   // the loader's own events: the final one only
            return c
        }())
        let body = ManagerHarness.progressiveJPEG
        h.server.route("/p.jpg", .drip(body: body, chunk: max(1, body.count / 10), interval: .milliseconds(30)))
        var context = ImageContext()
        context.previewInterval = .zero
        var received: Int64 = -1, previews = 0, finished = false
        for try await event in h.manager.events(for: h.url("/p.jpg"), options: .progressiveLoad, context: context) {
            switch event {
            case .progress(let progress):
                #expect(progress.receivedBytes >= received, "progress went back from \(received) to \(progress.receivedBytes)")
                received = progress.receivedBytes
            case .preview:
                previews += 1
                #expect(received > 0, "a preview came before any byte count")
            case .cached:
                Issue.record("a cached event without .refreshCached")
            case .finished:
                finished = true
            }
        }
        #expect(finished && previews >= 2)
        #expect(received == Int64(body.count))
        await h.finish()
    }
}

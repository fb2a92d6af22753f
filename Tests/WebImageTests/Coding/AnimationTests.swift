import Foundation
import Testing
@testable import WebImage

@Suite struct AnimationTests {
    static let animated = ["gif/chi.gif", "webp/TestImageAnimated.webp", "apng/TestImageAnimated.apng", "apng/dispose_op_previous.png"]

    @Test(arguments: animated)
    func lazyFramesEqualPreloadedFramesInAnyOrder(path: String) throws {
        let data = try Corpus.data(path)
        let lazy = try Image(data: data)
        let preloaded = try Image(data: data, options: ImageDecodingOptions(preloadAllFrames: true))
        #expect(lazy.isAnimated && lazy.frameCount == preloaded.frameCount)
        #expect(preloaded.memoryCost == preloaded.frameCount * preloaded.width * preloaded.height * 4)
        #expect(lazy.memoryCost < preloaded.memoryCost)
        let order = Array((0..<lazy.frameCount).reversed()) + [1, 0, lazy.frameCount - 1, 2]
        for index in order {
            #expect(try lazy.frame(at: index) == preloaded.frame(at: index), "\(path) frame \(index)")
        }
    }

    @Test(arguments: animated)
    func firstFrameOnlyGivesAStillImage(path: String) throws {
        let data = try Corpus.data(path)
        let still = try Image(data: data, options: ImageDecodingOptions(firstFrameOnly: true))
        #expect(still.frameCount == 1 && !still.isAnimated && still.loopCount == nil)
    }

    @Test func frameOutOfRangeThrows() throws {
        let image = try Image(data: try Corpus.data("gif/chi.gif"))
        #expect(throws: ImageError.frameOutOfRange(index: 99, count: image.frameCount)) { _ = try image.frame(at: 99) }
        #expect(throws: ImageError.frameOutOfRange(index: -1, count: image.frameCount)) { _ = try image.frame(at: -1) }
    }

    @Test func gifDelaysFollowTheBrowserRule() {
        #expect(GIFCoder.duration(centiseconds: 0) == 0.1)
        #expect(GIFCoder.duration(centiseconds: 1) == 0.1)
        #expect(GIFCoder.duration(centiseconds: 2) == 0.02)
        #expect(GIFCoder.duration(centiseconds: 7) == 0.07)
    }

    @Test func framesCanBeReadFromManyTasksAtOnce() async throws {
        let image = try Image(data: try Corpus.data("gif/chi.gif"))
        let expected = try image.preloaded()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in stride(from: task % image.frameCount, to: image.frameCount, by: 3) {
                        let frame = try image.frame(at: index), reference = try expected.frame(at: index)
                        #expect(frame == reference)
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

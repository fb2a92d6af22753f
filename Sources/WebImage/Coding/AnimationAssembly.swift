/// Builds an `Image` from a frame renderer the way the decode options ask: frame 0 now, the
/// rest lazily, all now (`preloadAllFrames`), or frame 0 alone (`firstFrameOnly`).
package enum AnimationAssembly {
    package static func image(renderer: sending any FrameRenderer, durations: [Double], format: ImageFormat, loopCount: Int?,
                      finishing: DecodeFinishing, orientation: Int?, options: ImageDecodingOptions) throws -> Image {
        let first = ImageFrame(bitmap: finishing(try renderer.render(0)), duration: durations.count > 1 ? durations[0] : 0)
        let store: FrameStore
        if durations.count <= 1 {
            store = .preloaded([first])
        } else if options.preloadAllFrames {
            var all = [first]
            for index in 1..<durations.count {
                all.append(ImageFrame(bitmap: finishing(try renderer.render(index)), duration: durations[index]))
            }
            store = .preloaded(all)
        } else {
            store = .lazy(LazyFrames(renderer: renderer, durations: durations, finish: { finishing($0) }))
        }
        return Image(firstFrame: first, frames: store, format: format, loopCount: durations.count > 1 ? loopCount : nil,
                     scale: options.scale, exifOrientation: orientation, orientationApplied: finishing.orientation != nil)
    }
}

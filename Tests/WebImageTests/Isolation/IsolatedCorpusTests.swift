import Foundation
import Testing
import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageIsolation
import WebImageJXL
import WebImageSVG
import WebImageTIFF

/// Every file of both corpora decodes in a locked-down worker exactly as in this process: the
/// seccomp filter leaves every decoder what it needs (a refused call would show as a failure or
/// a difference here), and the reply carries every frame, duration and colour description.
@Suite("Isolated decoding of the corpora", .serialized, .timeLimit(.minutes(3)))
struct IsolatedCorpusTests {
    /// The coders `webimage` registers, as its workers have them.
    static let coders = ImageCoders([TIFFCoder(), SVGCoder(), JXLCoder(), HEIFCoder(), AVIFCoder()] + ImageCoders.builtIn)

    static func files(in folder: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter {
            !["json", "md", "py", "txt"].contains($0.pathExtension) && !$0.path.contains("/reference/")
                && !((try? $0.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) ?? true)
        }.sorted { $0.path < $1.path }
    }

    @Test("Both corpora: the same pixels, frames, durations, colour and errors", arguments: [ImageColorSpace.sRGB, .original])
    func corpora(colorSpace: ImageColorSpace) async throws {
        let webimage = try #require(DecodingWorkerPoolTests.webimage)
        var configuration = DecodingWorkerPool.Configuration()
        configuration.executable = webimage
        let pool = DecodingWorkerPool(configuration: configuration)
        defer { pool.shutdown() }
        let files = Self.files(in: Corpus.directory) + Self.files(in: ModernCorpus.directory)
        try #require(files.count > 100, "the corpora are beside the package")
        let options = ImageDecodingOptions(colorSpace: colorSpace)
        var decoded = 0
        for file in files {
            let data = try Data(contentsOf: file)
            let name = file.lastPathComponent
            let local = Result { () throws(ImageError) -> (Image, [ImageFrame]) in
                do {
                    let image = try Self.coders.decode(data, options: options, context: ImageContext())
                    return (image, try image.allFrames())
                } catch let error as ImageError { throw error } catch { throw .undecodable(.unknown, reason: "\(error)") }
            }
            let isolated: Result<Image, any Error>
            do { isolated = .success(try await pool.decode(data, options: options)) } catch { isolated = .failure(error) }
            switch (local, isolated) {
            case (.success(let (image, frames)), .success(let remote)):
                decoded += 1
                #expect(remote.width == image.width && remote.height == image.height, "\(name)")
                #expect(remote.format == image.format && remote.frameDurations == image.frameDurations, "\(name)")
                #expect(remote.loopCount == image.loopCount, "\(name)")
                #expect(remote.colorInfo.cicp == image.colorInfo.cicp, "\(name): \(String(describing: remote.colorInfo.cicp)) in a worker")
                #expect(remote.colorInfo.iccProfile == image.colorInfo.iccProfile,
                        "\(name): \(remote.colorInfo.iccProfile?.count ?? -1) bytes of profile in a worker, \(image.colorInfo.iccProfile?.count ?? -1) here")
                #expect(remote.exifOrientation == image.exifOrientation, "\(name)")
                #expect(try remote.allFrames().map(\.bitmap) == frames.map(\.bitmap), "\(name)")
            case (.failure(let error), .failure(let remote)):
                #expect(remote as? ImageError == error, "\(name)")
            default:
                Issue.record("\(name): in this process \(local), in a worker \(isolated)")
            }
        }
        #expect(decoded > 100)
        #expect(pool.restartCount == 0)
    }
}

import Foundation
import WebImage

/// The server's decoding isolation with the formats its configuration leaves out refused
/// before a worker sees them (the workers decode with the whole program's registry).
struct SourceFormatFilter: ImageDecodingIsolation {
    let base: any ImageDecodingIsolation
    let refused: Set<ImageFormat>

    func decode(_ data: Data, options: ImageDecodingOptions) async throws -> Image {
        let format = ImageFormat(sniffing: data)
        if refused.contains(format) { throw ImageError.unsupportedFormat(format) }
        return try await base.decode(data, options: options)
    }
}

extension ServerConfiguration {
    /// The source formats refused although a coder may read them: PDF unless `pdf`.
    var refusedSourceFormats: Set<ImageFormat> { pdf ? [] : [.pdf] }

    /// The server's registry: the program's coders but those of refused formats, decoding in
    /// `workers` (through the filter) when there are workers.
    func sourceCoders(workers: (any ImageDecodingIsolation)?) -> ImageCoders {
        let refused = refusedSourceFormats
        let coders = ImageCoders.shared.all.filter { coder in !refused.contains { coder.canDecode(Self.header(of: $0)) } }
        return ImageCoders(coders, isolation: workers.map { SourceFormatFilter(base: $0, refused: refused) })
    }

    /// The first bytes of a file of `format`, as far as its coders sniff (PDF only).
    private static func header(of format: ImageFormat) -> Data {
        format == .pdf ? Data("%PDF-1.7\n".utf8) : Data()
    }
}

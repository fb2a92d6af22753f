import Foundation

/// The bytes of a chunked file (PNG, or WebP's RIFF) kept as they arrive, except the payloads of
/// the chunks that hold image data: what remains is the file's structure and metadata (the
/// chunks that give its size and orientation), so that an incremental decoder that decodes the
/// image data as it comes does not hold the body a second time. Once a chunk that starts an
/// animation is seen, everything is kept (animations are decoded from the whole file).
struct ChunkSkeleton {
    enum Layout {
        /// An 8-byte signature, then chunks of a 4-byte big-endian length, a 4-byte type, the
        /// payload and a 4-byte CRC.
        case png
        /// A 12-byte RIFF header, then chunks of a 4-byte type, a 4-byte little-endian size and
        /// the payload, padded to an even length.
        case riff
    }

    let layout: Layout
    /// Chunk types whose payload is dropped.
    let dropped: Set<String>
    /// Chunk types after which everything is kept.
    let animation: Set<String>
    /// The bytes kept so far.
    private(set) var bytes = Data()
    /// Whether an animation chunk was seen before any image data (from then on nothing is dropped).
    private(set) var isAnimation = false
    private var fileHeaderLeft: Int
    private var header = Data()
    private var skip = 0
    private var keep = 0
    private var droppedAny = false

    init(_ layout: Layout, dropping dropped: Set<String>, animation: Set<String>) {
        self.layout = layout
        self.dropped = dropped
        self.animation = animation
        fileHeaderLeft = layout == .png ? 8 : 12
    }

    /// Takes the next bytes of the file.
    mutating func add(_ chunk: Data) {
        var rest = chunk[...]
        while !rest.isEmpty {
            if fileHeaderLeft > 0 || keep > 0 {
                let n = min(fileHeaderLeft > 0 ? fileHeaderLeft : keep, rest.count)
                bytes.append(rest.prefix(n))
                rest = rest.dropFirst(n)
                if fileHeaderLeft > 0 { fileHeaderLeft -= n } else { keep -= n }
                continue
            }
            if skip > 0 {
                let n = min(skip, rest.count)
                rest = rest.dropFirst(n)
                skip -= n
                continue
            }
            let n = min(8 - header.count, rest.count)
            header.append(rest.prefix(n))
            rest = rest.dropFirst(n)
            guard header.count == 8 else { break }
            let (type, following) = parse(header)
            // An animation chunk counts only before any image data (an APNG's acTL after IDAT
            // is ignored, as the APNG rules say).
            if animation.contains(type), !droppedAny { isAnimation = true }
            if !isAnimation, dropped.contains(type) {
                droppedAny = true
                // An empty chunk of the same type stays in its place: what comes before or after
                // the image data can matter (PNG reads eXIf only before IDAT).
                bytes.append(placeholder(type))
                skip = following
            } else {
                bytes.append(header)
                keep = following
            }
            header = Data()
        }
    }

    /// An empty chunk of `type`: a zero length and, for PNG, a zero CRC (image-data chunks'
    /// CRCs are not read from the skeleton).
    private func placeholder(_ type: String) -> Data {
        switch layout {
        case .png: Data([0, 0, 0, 0]) + Data(type.utf8) + Data([0, 0, 0, 0])
        case .riff: Data(type.utf8) + Data([0, 0, 0, 0])
        }
    }

    /// A chunk header's type and the number of bytes that follow it in the chunk.
    private func parse(_ header: Data) -> (String, Int) {
        let b = [UInt8](header)
        switch layout {
        case .png:
            let length = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
            return (String(decoding: b[4..<8], as: UTF8.self), length + 4)
        case .riff:
            let size = Int(b[4]) | Int(b[5]) << 8 | Int(b[6]) << 16 | Int(b[7]) << 24
            return (String(decoding: b[0..<4], as: UTF8.self), size + (size & 1))
        }
    }

    /// The payload of the first RIFF chunk of `type` among the bytes kept.
    func riffChunk(_ type: String) -> Data? {
        let b = [UInt8](bytes)
        var o = 12
        while o + 8 <= b.count {
            let name = String(decoding: b[o..<(o + 4)], as: UTF8.self)
            let size = Int(b[o + 4]) | Int(b[o + 5]) << 8 | Int(b[o + 6]) << 16 | Int(b[o + 7]) << 24
            guard size <= b.count - o - 8 else { return nil }
            if name == type { return Data(b[(o + 8)..<(o + 8 + size)]) }
            o += 8 + size + (size & 1)
        }
        return nil
    }
}

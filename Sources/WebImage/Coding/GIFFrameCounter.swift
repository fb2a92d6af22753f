import Foundation

/// Walks a GIF's blocks as its bytes arrive and counts the frames whose image data is complete
/// (up to the terminating empty sub-block), reading each byte of structure once: a preview
/// decodes the file only when a new frame can be shown.
struct GIFFrameCounter {
    /// Frames whose data arrived whole.
    private(set) var completeFrames = 0
    /// Where the walk stands: the offset of the next byte to read and what it starts.
    private var offset = 0
    private var stage = Stage.header

    private enum Stage {
        /// The signature, the logical screen descriptor and its colour table.
        case header
        /// An introducer: an extension, an image or the trailer.
        case block
        /// A run of sub-blocks, the data of an image or of an extension.
        case subBlocks(image: Bool)
        /// The trailer, or bytes that are not a GIF block: nothing more is counted.
        case end
    }

    /// Walks the bytes of `data` that were not walked yet (`data` is the whole file so far).
    mutating func advance(in data: Data) {
        let base = data.startIndex
        while true {
            let available = data.count - offset
            switch stage {
            case .header:
                guard available >= 13 else { return }
                let table = Self.colorTableSize(data[base + offset + 10])
                guard available >= 13 + table else { return }
                offset += 13 + table
                stage = .block
            case .block:
                guard available >= 1 else { return }
                switch data[base + offset] {
                case 0x21:
                    guard available >= 2 else { return }
                    offset += 2
                    stage = .subBlocks(image: false)
                case 0x2C:
                    // The descriptor (10 bytes), its colour table and the LZW code size.
                    guard available >= 10 else { return }
                    let table = Self.colorTableSize(data[base + offset + 9])
                    guard available >= 11 + table else { return }
                    offset += 11 + table
                    stage = .subBlocks(image: true)
                default:
                    stage = .end
                }
            case .subBlocks(let image):
                guard available >= 1 else { return }
                let size = Int(data[base + offset])
                guard available >= 1 + size else { return }
                offset += 1 + size
                if size == 0 {
                    if image { completeFrames += 1 }
                    stage = .block
                }
            case .end:
                return
            }
        }
    }

    /// The bytes of the colour table a packed field announces (none when its top bit is clear).
    private static func colorTableSize(_ packed: UInt8) -> Int {
        packed & 0x80 != 0 ? 3 << (Int(packed & 7) + 1) : 0
    }
}

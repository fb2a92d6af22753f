// The child of the crash-consistency test (CrashConsistencyTests): stores entries into a disk
// cache as fast as it can until its parent kills it with SIGKILL. Each entry describes itself,
// so that the parent can check whatever survives without being told what was written:
//
//   data:          "WICR" · index (UInt32 LE) · generation (UInt32 LE) · body length (UInt32 LE)
//                  · SHA-256 of the body (32 bytes) · body (pseudo-random bytes)
//   extended data: "index generation bodyLength sha256hex" in ASCII
//
// Usage: cache-crash-writer DIRECTORY GENERATION COUNT [--side-files]
// Writes entries "entry-0" ... "entry-(COUNT-1)" in an order and with sizes (1 KB to 16 MB,
// mostly small) chosen by GENERATION, prints "ready" before the first and "done" after the last.
import Foundation
import WebImage

struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One entry's size for this generation: 80 % from 1 to 64 KB, 18 % up to 1 MB, 2 % up to 16 MB.
func bodySize(_ random: inout SplitMix) -> Int {
    let bucket = random.next() % 100
    let (low, high) = bucket < 80 ? (1 << 10, 64 << 10) : bucket < 98 ? (64 << 10, 1 << 20) : (1 << 20, 16 << 20)
    return low + Int(random.next() % UInt64(high - low))
}

func entry(index: Int, generation: Int, size: Int) -> (data: Data, extended: Data) {
    var random = SplitMix(state: UInt64(index) << 32 | UInt64(generation))
    var words = [UInt64](repeating: 0, count: (size + 7) / 8)
    for i in words.indices { words[i] = random.next() }
    let body = words.withUnsafeBytes { Data($0.prefix(size)) }
    let digest = Digest.sha256(body)
    var data = Data("WICR".utf8)
    for value in [UInt32(index), UInt32(generation), UInt32(size)] { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    var hex = digest[...]
    while !hex.isEmpty {
        data.append(UInt8(hex.prefix(2), radix: 16)!)
        hex = hex.dropFirst(2)
    }
    data.append(body)
    return (data, Data("\(index) \(generation) \(size) \(digest)".utf8))
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let generation = Int(arguments[2]), let count = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: cache-crash-writer DIRECTORY GENERATION COUNT [--side-files]\n".utf8))
    exit(2)
}
let disk = DiskCache(directory: URL(fileURLWithPath: arguments[1]),
                     configuration: .init(maxAge: nil, cleanupInterval: nil, usesExtendedAttributes: !arguments.contains("--side-files")))
let cache = ImageCache(memory: MemoryCache(), disk: disk)
var order = SplitMix(state: UInt64(generation) &* 7919)
var indices = Array(0..<count)
for i in stride(from: count - 1, to: 0, by: -1) { indices.swapAt(i, Int(order.next() % UInt64(i + 1))) }
FileHandle.standardOutput.write(Data("ready\n".utf8))
for index in indices {
    let (data, extended) = entry(index: index, generation: generation, size: bodySize(&order))
    try await cache.store(nil, data: data, extendedData: extended, forKey: "entry-\(index)", to: .disk)
}
FileHandle.standardOutput.write(Data("done\n".utf8))

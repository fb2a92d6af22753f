import FuzzSupport
@_spi(Fuzzing) import WebImageIsolation

/// libFuzzer's entry: a decoding worker's reply, as a compromised worker could write it. The
/// input is a 16-bit little-endian length, the reply's message of that length, then the contents
/// of its attached pixel file; the pool reads it as it reads a worker's (sizes, counts and
/// strings checked before anything is allocated).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: bytes, count: count)
    guard count >= 2 else { return 0 }
    let length = min(count - 2, Int(input[0]) | Int(input[1]) << 8)
    _ = DecodingWorkerPool.reading(message: input[2..<2 + length], file: input[(2 + length)...])
    return 0
}

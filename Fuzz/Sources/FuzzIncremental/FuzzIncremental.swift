import FuzzSupport
import WebImage

/// libFuzzer's entry: The incremental decoders of every format, fed in pieces whose sizes come from the input's first bytes; the third byte picks the coder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    let coders: [any ImageCoder] = [PNGCoder(), JPEGCoder(), WebPCoder(), GIFCoder()]
    guard data.count > 3 else { return 0 }
    Fuzz.stream(data.dropFirst(), with: coders[Int(data[data.startIndex]) % coders.count])
    return 0
}

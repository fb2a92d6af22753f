import FuzzSupport
import WebImage

/// libFuzzer's entry: GIF through the GIF coder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    Fuzz.decode(data, with: GIFCoder())
    return 0
}

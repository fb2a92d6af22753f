import FuzzSupport
import WebImage

/// libFuzzer's entry: WebP, still and animated, through the WebP coder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    Fuzz.decode(data, with: WebPCoder())
    return 0
}

import FuzzSupport
import WebImage

/// libFuzzer's entry: PNG and APNG through the PNG coder, whole and at a size (rows reduced as
/// they are inflated).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    Fuzz.decode(data, with: PNGCoder())
    Fuzz.decodeAtSize(data, with: PNGCoder())
    return 0
}

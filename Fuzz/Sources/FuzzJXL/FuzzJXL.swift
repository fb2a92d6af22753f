import FuzzSupport
import WebImage
import WebImageJXL

/// libFuzzer's entry: JPEG XL through the JPEG XL coder plug-in (libjxl), whole and, on odd
/// first bytes, streamed through its incremental decoder in pieces.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    if count > 0, bytes[0] & 1 == 1 {
        Fuzz.stream(data, with: JXLCoder())
    } else {
        Fuzz.decode(data, with: JXLCoder())
    }
    return 0
}

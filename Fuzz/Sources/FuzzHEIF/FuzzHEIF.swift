import FuzzSupport
import WebImage
import WebImageHEIF

/// libFuzzer's entry: HEIC/HEIF through the HEIF coder plug-in (libheif, libde265).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    Fuzz.decode(Fuzz.data(bytes, count), with: HEIFCoder())
    return 0
}

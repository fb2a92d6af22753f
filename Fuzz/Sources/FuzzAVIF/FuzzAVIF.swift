import FuzzSupport
import WebImage
import WebImageAVIF

/// libFuzzer's entry: AVIF stills, grids and sequences through the AVIF coder plug-in (libavif).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    Fuzz.decode(Fuzz.data(bytes, count), with: AVIFCoder())
    return 0
}

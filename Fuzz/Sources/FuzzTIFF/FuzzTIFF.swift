import FuzzSupport
import WebImage
import WebImageTIFF

/// libFuzzer's entry: TIFF through the TIFF coder plug-in (libtiff), the first page.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    Fuzz.decode(Fuzz.data(bytes, count), with: TIFFCoder())
    return 0
}

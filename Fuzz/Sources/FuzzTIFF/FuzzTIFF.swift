import FuzzSupport
import WebImage
import WebImageTIFF

/// libFuzzer's entry: TIFF through the TIFF coder plug-in (libtiff), the first page, in 8 bits
/// and at the source's depth (the sample-by-sample reader).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    Fuzz.decode(data, with: TIFFCoder())
    Fuzz.decodeDeep(data, with: TIFFCoder())
    return 0
}

import FuzzSupport
import WebImage
import WebImagePDF

/// libFuzzer's entry: PDF through the PDF coder plug-in (poppler), the first page at 64 px (a
/// thumbnail, as a service draws it; the size keeps each run short).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    _ = try? PDFCoder().decode(Fuzz.data(bytes, count), options: ImageDecodingOptions(maxPixelSize: 64))
    return 0
}

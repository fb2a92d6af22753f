import FuzzSupport
import WebImage

/// libFuzzer's entry: JPEG (with its EXIF and XMP segments) through the JPEG coder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    Fuzz.decode(data, with: JPEGCoder())
    return 0
}

import FuzzSupport
import WebImage

/// libFuzzer's entry: JPEG (with its EXIF and XMP segments) through the JPEG coder, whole, at a
/// size (the scaled rows reduced as libjpeg gives them) and cut to a fill box (only its rows).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    Fuzz.decode(data, with: JPEGCoder())
    Fuzz.decodeAtSize(data, with: JPEGCoder())
    Fuzz.decodeFillCut(data, with: JPEGCoder())
    return 0
}

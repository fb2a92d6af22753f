import FuzzSupport
import WebImage

/// libFuzzer's entry: ICO and CUR through our own directory parser (PNG and DIB payloads), at
/// the full size and, on odd first bytes, at a thumbnail size (another entry is chosen).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    if count > 0, bytes[0] & 1 == 1 {
        _ = try? ICOCoder().decode(data, options: ImageDecodingOptions(maxPixelSize: 24, pixelLimit: 1 << 24))
    } else {
        Fuzz.decode(data, with: ICOCoder())
    }
    return 0
}

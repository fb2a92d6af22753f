import FuzzSupport
import WebImage

/// libFuzzer's entry: BMP through our own decoder (headers, palettes, bit fields, RLE).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    Fuzz.decode(Fuzz.data(bytes, count), with: BMPCoder())
    return 0
}

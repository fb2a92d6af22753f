import FuzzSupport
import WebImage

/// libFuzzer's entry: Format sniffing and the registry: whatever the bytes are, the coder they pick decodes them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    _ = ImageFormat(sniffing: data)
    Fuzz.decodeWithRegistry(data)
    return 0
}

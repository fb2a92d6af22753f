import FuzzSupport
import WebImage

/// libFuzzer's entry: the metadata reader (`ImageMetadata(reading:)`: EXIF, XMP and ICC out of
/// every format, the EXIF values, the capture date) and the rewriters (`ImageMetadata.stripped`,
/// which `webimage serve` runs in its own process on strangers' files), each format, copyright
/// kept and not, and a rewritten file rewritten again changes nothing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Fuzz.data(bytes, count)
    let read = ImageMetadata(reading: data)
    _ = (read.orientation, read.iccProfileDescription, read.exif?.captureDate)
    for format in [ImageFormat.jpeg, .png, .webp, .gif] {
        for keep in [false, true] {
            guard let stripped = ImageMetadata.stripped(data, format: format, keepingCopyright: keep) else { continue }
            if !keep, let again = ImageMetadata.stripped(stripped, format: format), again != stripped, format != .webp {
                fatalError("stripping \(format) twice changed the file")
            }
        }
    }
    return 0
}

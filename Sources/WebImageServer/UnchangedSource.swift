import Foundation
import WebImage

/// When a request changes nothing of its source's pixels (same format, no transformer, no
/// quality), the source's own bytes are its result, but only once they are what the request
/// asks for: upright, in the asked colour space, and without the metadata the server strips.
struct UnchangedSource {
    /// Whether private metadata is removed (the request's `sm:`, else the server's).
    var stripMetadata: Bool
    /// Whether EXIF's Copyright and Artist stay when it is (`kcr:`, else the server's).
    var keepCopyright: Bool
    /// The colour space the result must be in.
    var colorSpace: ImageColorSpace

    /// The bytes of `data` (the file `image` was decoded from) to answer with, or nil when the
    /// decoded image must be encoded instead: its EXIF orientation was applied to the pixels
    /// (the file's would be lost with its EXIF), its colour description is converted (or, HDR,
    /// tone-mapped) to sRGB, or
    /// its metadata cannot be removed without re-encoding (AVIF, HEIC, JPEG XL, TIFF, ...).
    func body(of data: Data, decodedAs image: Image) -> Data? {
        if image.isOrientationApplied, let orientation = image.exifOrientation, orientation != 1 { return nil }
        if colorSpace == .sRGB {
            // Converted to sRGB, or an HDR source tone-mapped to it.
            let info = ImageMetadata.colorInfo(of: data, format: image.format)
            if info.hdrCICP != nil || ColorTransform.toSRGB(info) != nil { return nil }
        }
        guard stripMetadata else { return data }
        return ImageMetadata.stripped(data, format: image.format, keepingCopyright: keepCopyright)
    }
}

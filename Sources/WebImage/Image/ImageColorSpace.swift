/// The colour space a decoder gives its pixels in (`ImageDecodingOptions.colorSpace`).
///
/// The default is `.sRGB`: an image with a Display P3, Adobe RGB, grey or CMYK profile (or AVIF
/// and HEIF colour code points other than sRGB's) is converted with lcms2, relative
/// colorimetric, as libvips and Pillow's ImageCms do by default, so that it looks right
/// wherever its pixels go next (a thumbnail, another format, a screen that assumes sRGB).
/// SDWebImage gives its users the same on Apple platforms, where decoding draws the image
/// into the device's RGB colour space.
public enum ImageColorSpace: String, Sendable, Hashable, CaseIterable, Codable {
    /// Converted to sRGB when the file describes another colour space (the default). The
    /// image then carries no colour description: its pixels are sRGB.
    case sRGB = "srgb"
    /// The values as the file stores them, with its colour description kept on
    /// `Image.colorInfo`; encoders embed the profile again, so the colours survive a round trip.
    case original
}

import Foundation

/// The colour description an image file carries: its embedded ICC profile and its CICP code
/// points (ITU-T H.273, as AVIF, HEIF and JPEG XL signal them). Decoders read it and keep it
/// on the `Image`; the pixels are left as the file stores them.
public struct ImageColorInfo: Sendable, Hashable {
    /// The embedded ICC profile, as stored, if any.
    public var iccProfile: Data?
    /// The CICP code points, if the file signals them.
    public var cicp: CICP?

    /// A colour description.
    public init(iccProfile: Data? = nil, cicp: CICP? = nil) {
        self.iccProfile = iccProfile
        self.cicp = cicp
    }

    /// The embedded profile's own description (its `desc` tag), e.g. "Display P3".
    public var profileDescription: String? { iccProfile.flatMap(ICCProfile.description(of:)) }

    /// The profile an encoder embeds with RGB pixels: the ICC profile when it describes an RGB
    /// colour space (a grey or CMYK profile does not describe the decoded RGBA pixels).
    /// None for HDR code points, which encoders write instead (`hdrCICP`).
    package var embeddableProfile: Data? {
        guard hdrCICP == nil, let icc = iccProfile, icc.count >= 132, icc[icc.startIndex + 16..<icc.startIndex + 20].elementsEqual("RGB ".utf8) else {
            return nil
        }
        return icc
    }

    /// The code points when they say PQ or HLG (an HDR image kept as HDR): encoders write
    /// them (`colr`/`nclx`, the colour encoding, `cICP`) rather than a profile.
    package var hdrCICP: CICP? {
        guard let cicp, cicp.transferCharacteristics == 16 || cicp.transferCharacteristics == 18 else { return nil }
        return cicp
    }

    /// Whether the file carried no colour description at all.
    public var isEmpty: Bool { iccProfile == nil && cicp == nil }

    /// Coding-independent code points (ITU-T H.273): which primaries, transfer function and
    /// YCbCr matrix the samples use, and whether they span the full range. sRGB is 1/13/0 (or
    /// 1/13/6 for YCbCr-coded sRGB), full range; Display P3 is 12/13.
    public struct CICP: Sendable, Hashable {
        /// `colour_primaries` (1 BT.709/sRGB, 9 BT.2020, 12 P3-D65, 2 unspecified).
        public var colorPrimaries: Int
        /// `transfer_characteristics` (13 sRGB, 16 PQ, 18 HLG, 8 linear, 2 unspecified).
        public var transferCharacteristics: Int
        /// `matrix_coefficients` (0 identity/RGB, 1 BT.709, 6 BT.601, 9 BT.2020, 2 unspecified).
        public var matrixCoefficients: Int
        /// Whether samples use the full range (otherwise the limited, video range).
        public var fullRange: Bool

        /// Code points as read from a file.
        public init(colorPrimaries: Int, transferCharacteristics: Int, matrixCoefficients: Int, fullRange: Bool) {
            self.colorPrimaries = colorPrimaries
            self.transferCharacteristics = transferCharacteristics
            self.matrixCoefficients = matrixCoefficients
            self.fullRange = fullRange
        }
    }
}

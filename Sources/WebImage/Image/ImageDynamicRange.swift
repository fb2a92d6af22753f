/// What a decode does with an HDR image (`ImageDecodingOptions.dynamicRange`): one whose colour
/// code points say PQ (SMPTE ST 2084) or HLG (ARIB STD-B67), as cameras and phones write them
/// in AVIF, HEIC and JPEG XL. SDWebImage's `decodeToHDR` context option is the counterpart.
public enum ImageDynamicRange: String, Sendable, Hashable, CaseIterable, Codable {
    /// Tone-mapped to SDR sRGB (the default): BT.2390's EETF, on the largest of the three
    /// linear components so that hues stay, compresses the source's peak (1000 cd/m² assumed)
    /// to SDR white, taken as BT.2408's reference white (203 cd/m²); levels below the knee
    /// (about 95 cd/m²) keep their light. The primaries are converted to sRGB's, and what falls
    /// outside is clipped. With `ImageColorSpace.original` the stored values are kept.
    case standard
    /// Kept as HDR: decoded at 16 bits a channel (whatever `bitDepth` says) with the stored PQ
    /// or HLG values and the CICP code points on `Image.colorInfo`, which the AVIF, HEIC, JPEG
    /// XL and PNG encoders write again (`colr`/`nclx`, the colour encoding, `cICP`), so that the
    /// result stays HDR.
    case high
}

import Foundation
@testable import WebImage

/// BT.2390's EETF written once more, in numpy (float64, no tables): the reference the tone
/// mapper is checked against. PQ or HLG (BT.2100) RGBA16 over BT.2020 or P3 primaries in, sRGB
/// out, by the same rules the library states (ImageDynamicRange.standard): the EETF applied to
/// the largest linear component, a 1000 cd/m² source peak, BT.2408's 203 cd/m² as SDR white,
/// the primaries converted by matrix and clipped.
enum ToneMapReference {
    static let script = #"""
    import sys, numpy as np
    path_in, path_out, width, height, transfer, primaries, deep = sys.argv[1:8]
    v = np.fromfile(path_in, dtype='<u2').reshape(-1, 4).astype(np.float64) / 65535
    m1, m2, c1, c2, c3 = 2610/16384, 2523/4096*128, 3424/4096, 2413/4096*32, 2392/4096*32
    def pq_eotf(e):
        p = np.power(np.clip(e, 0, 1), 1/m2)
        return 10000 * np.power(np.maximum(p - c1, 0) / (c2 - c3 * p), 1/m1)
    def pq_inv(n):
        y = np.power(np.maximum(n, 0) / 10000, m1)
        return np.power((c1 + c2 * y) / (1 + c3 * y), m2)
    white, peak = 203.0, 1000.0
    xy = {'9': [0.708, 0.292, 0.170, 0.797, 0.131, 0.046], '12': [0.680, 0.320, 0.265, 0.690, 0.150, 0.060],
          '1': [0.640, 0.330, 0.300, 0.600, 0.150, 0.060]}
    def to_xyz(p):
        P = np.array([[p[0]/p[1], p[2]/p[3], p[4]/p[5]], [1, 1, 1],
                      [(1-p[0]-p[1])/p[1], (1-p[2]-p[3])/p[3], (1-p[4]-p[5])/p[5]]])
        W = np.array([0.3127/0.3290, 1, (1-0.3127-0.3290)/0.3290])
        return P * np.linalg.solve(P, W)
    src = to_xyz(xy[primaries]); M = np.linalg.inv(to_xyz(xy['1'])) @ src
    rgb = v[:, :3]
    if transfer == '16':
        lin = pq_eotf(rgb)
    else:
        a = 0.17883277; b = 1 - 4*a; c = 0.5 - a*np.log(4*a)
        scene = np.where(rgb <= 0.5, rgb*rgb/3, (np.exp((rgb - c)/a) + b)/12)
        ys = scene @ src[1]
        lin = peak * np.power(ys, 0.2)[:, None] * scene
    m = lin.max(axis=1)
    smax = pq_inv(peak); e1 = np.minimum(pq_inv(m) / smax, 1)
    maxlum = pq_inv(white) / smax; ks = 1.5*maxlum - 0.5
    t = (e1 - ks) / (1 - ks)
    p = (2*t**3 - 3*t**2 + 1)*ks + (t**3 - 2*t**2 + t)*(1 - ks) + (-2*t**3 + 3*t**2)*maxlum
    e2 = np.where(e1 < ks, e1, p)
    mapped = pq_eotf(e2 * smax)
    gain = np.where(m > 0, mapped / np.where(m > 0, m, 1), 1)
    out = np.clip((lin * gain[:, None] / white) @ M.T, 0, 1)
    enc = np.where(out <= 0.0031308, 12.92*out, 1.055*np.power(out, 1/2.4) - 0.055)
    if deep == '1':
        res = np.concatenate([np.rint(enc*65535), v[:, 3:]*65535], axis=1).astype('<u2')
    else:
        res = np.concatenate([np.rint(enc*255), np.rint(v[:, 3:]*255)], axis=1).astype(np.uint8)
    res.tofile(path_out)
    """#

    /// `bitmap` (RGBA16 holding PQ, `transfer` 16, or HLG, 18, values over `primaries`) mapped
    /// by the reference to sRGB, RGBA8 or (`deep`) RGBA16.
    static func map(_ bitmap: Bitmap, transfer: Int, primaries: Int, deep: Bool = false) throws -> Bitmap {
        let dir = TemporaryDirectory("tone-map")
        defer { dir.remove() }
        let input = dir.url.appendingPathComponent("in.raw"), output = dir.url.appendingPathComponent("out.raw")
        let values = try samples16(bitmap)
        try values.withUnsafeBytes { Data($0) }.write(to: input)
        try Pillow.run(script, arguments: [input.path, output.path, "\(bitmap.width)", "\(bitmap.height)", "\(transfer)", "\(primaries)",
                                           deep ? "1" : "0"])
        let data = try Data(contentsOf: output)
        if deep {
            let samples = data.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
            return Bitmap(width: bitmap.width, height: bitmap.height, rgba16: samples)
        }
        return Bitmap(width: bitmap.width, height: bitmap.height, rgba: data)
    }

    private static func samples16(_ bitmap: Bitmap) throws -> [UInt16] {
        guard let values = bitmap.converted(to: .rgba16).rgba16 else { throw ImageError.transformFailed("not RGBA16") }
        return values
    }
}

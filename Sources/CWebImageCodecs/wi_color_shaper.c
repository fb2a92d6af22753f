// The matrix-shaper path from an RGB profile to sRGB: three input curves, one 3x3 matrix and
// sRGB's output curve, all read from lcms2's parsed profiles (lcms2 stays the authority on
// what a profile means; this only evaluates what it parsed, as skcms and qcms do in browsers).
//
// Tables: each input channel's 256 values map to that channel's share of the three linear
// outputs (the curve and the matrix's column in one lookup, fixed point with 17 fraction bits);
// the summed linear value, cut to 14 bits, indexes the output curve. That table spans every sum
// the input tables can make, its entries outside [0, 1] holding the clamped ends, so a pixel
// takes no clamping: three lookups, two additions, one shift and three more lookups.
#include "wi_color_shaper.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t wi_v4 __attribute__((vector_size(16)));

enum {
    LINEAR_BITS = 17,              // fraction bits of a table entry
    INDEX_BITS = 14,               // fraction bits of the output curve's index
    OUTPUT_SIZE = (1 << INDEX_BITS) + 1,
    MAX_OUTPUT = 1 << 18,          // the output table's entries at most (a wider matrix goes to lcms2)
};

struct wi_color_shaper {
    wi_v4 input[3][256];
    int32_t offset;       // the output table's index of linear 0
    uint8_t output[];     // from the lowest sum up to the highest
};

// The three colorants of a matrix-shaper profile as the columns of its RGB -> XYZ (D50) matrix.
static int colorant_matrix(cmsHPROFILE profile, double m[3][3]) {
    const cmsTagSignature tags[3] = { cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag };
    for (int c = 0; c < 3; c++) {
        const cmsCIEXYZ *xyz = cmsReadTag(profile, tags[c]);
        if (!xyz) return 0;
        m[0][c] = xyz->X; m[1][c] = xyz->Y; m[2][c] = xyz->Z;
    }
    return 1;
}

static int invert(const double m[3][3], double out[3][3]) {
    double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
               - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
               + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if (!isfinite(det) || fabs(det) < 1e-9) return 0;
    out[0][0] = (m[1][1] * m[2][2] - m[1][2] * m[2][1]) / det;
    out[0][1] = (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det;
    out[0][2] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det;
    out[1][0] = (m[1][2] * m[2][0] - m[1][0] * m[2][2]) / det;
    out[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det;
    out[1][2] = (m[0][2] * m[1][0] - m[0][0] * m[1][2]) / det;
    out[2][0] = (m[1][0] * m[2][1] - m[1][1] * m[2][0]) / det;
    out[2][1] = (m[0][1] * m[2][0] - m[0][0] * m[2][1]) / det;
    out[2][2] = (m[0][0] * m[1][1] - m[0][1] * m[1][0]) / det;
    return 1;
}

// Whether lcms2 would take this profile's matrix and curves for a relative colorimetric
// transform: an RGB matrix-shaper with no LUT tag that it would prefer.
static int is_plain_matrix_shaper(cmsHPROFILE profile) {
    if (cmsGetColorSpace(profile) != cmsSigRgbData || cmsGetPCS(profile) != cmsSigXYZData) return 0;
    if (!cmsIsMatrixShaper(profile)) return 0;
    const cmsTagSignature luts[] = { cmsSigAToB0Tag, cmsSigAToB1Tag, cmsSigAToB2Tag, cmsSigDToB0Tag, cmsSigDToB1Tag,
                                     cmsSigDToB2Tag, cmsSigDToB3Tag };
    for (size_t i = 0; i < sizeof luts / sizeof luts[0]; i++) if (cmsIsTag(profile, luts[i])) return 0;
    return 1;
}

// The output curve: sRGB's red curve inverted by lcms2, sampled at every 14-bit linear value.
// 0 unless its three curves are the same (then one table serves them all).
static int fill_output(cmsHPROFILE srgb, uint8_t *table) {
    const cmsTagSignature tags[3] = { cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag };
    uint8_t other[OUTPUT_SIZE];
    for (int c = 0; c < 3; c++) {
        const cmsToneCurve *curve = cmsReadTag(srgb, tags[c]);
        if (!curve) return 0;
        cmsToneCurve *inverse = cmsReverseToneCurve(curve);
        if (!inverse) return 0;
        uint8_t *into = c == 0 ? table : other;
        for (int i = 0; i < OUTPUT_SIZE; i++) {
            float v = cmsEvalToneCurveFloat(inverse, (float)i / (float)(1 << INDEX_BITS));
            if (!(v > 0)) v = 0;
            if (v > 1) v = 1;
            into[i] = (uint8_t)floorf(v * 255.0f + 0.5f);
        }
        cmsFreeToneCurve(inverse);
        if (c > 0 && memcmp(table, other, OUTPUT_SIZE) != 0) return 0;
    }
    return 1;
}

// Each input channel's share of the three linear outputs, through its curve and the matrix `m`,
// with the lowest and highest sums they can make (`lowest` and `highest` start at [0, 1]).
static int fill_input(cmsHPROFILE input, const double m[3][3], int32_t tables[3][256][3], int64_t *lowest, int64_t *highest) {
    const cmsTagSignature curves[3] = { cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag };
    int64_t low[3] = { 0, 0, 0 }, high[3] = { 0, 0, 0 };
    for (int c = 0; c < 3; c++) {
        const cmsToneCurve *curve = cmsReadTag(input, curves[c]);
        if (!curve) return 0;
        int32_t least[3] = { INT32_MAX, INT32_MAX, INT32_MAX }, most[3] = { INT32_MIN, INT32_MIN, INT32_MIN };
        for (int v = 0; v < 256; v++) {
            // As lcms2's own 8-bit shaper: the curve at v / 255, never negative.
            double linear = cmsEvalToneCurveFloat(curve, (float)v / 255.0f);
            if (!(linear > 0)) linear = 0;
            if (linear > 4) linear = 4;
            for (int r = 0; r < 3; r++) {
                int32_t t = (int32_t)lround(m[r][c] * linear * (double)(1 << LINEAR_BITS));
                tables[c][v][r] = t;
                if (t < least[r]) least[r] = t;
                if (t > most[r]) most[r] = t;
            }
        }
        for (int r = 0; r < 3; r++) { low[r] += least[r]; high[r] += most[r]; }
    }
    for (int r = 0; r < 3; r++) {
        if (low[r] < *lowest) *lowest = low[r];
        if (high[r] > *highest) *highest = high[r];
    }
    return 1;
}

wi_color_shaper *wi_color_shaper_make(cmsHPROFILE input, cmsHPROFILE srgb) {
    if (!is_plain_matrix_shaper(input) || !is_plain_matrix_shaper(srgb)) return NULL;
    double to_xyz[3][3], from_xyz_rgb[3][3], from_xyz[3][3], m[3][3];
    if (!colorant_matrix(input, to_xyz) || !colorant_matrix(srgb, from_xyz_rgb) || !invert(from_xyz_rgb, from_xyz)) return NULL;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            m[r][c] = from_xyz[r][0] * to_xyz[0][c] + from_xyz[r][1] * to_xyz[1][c] + from_xyz[r][2] * to_xyz[2][c];
            // A profile this far from a display's (or a broken one) is left to lcms2, and the
            // fixed-point sums below cannot overflow.
            if (!isfinite(m[r][c]) || fabs(m[r][c]) > 16) return NULL;
        }
    int32_t tables[3][256][3];
    int64_t lowest = 0, highest = (int64_t)1 << LINEAR_BITS;
    if (!fill_input(input, m, tables, &lowest, &highest)) return NULL;
    const int shift = LINEAR_BITS - INDEX_BITS;
    int64_t first = (lowest >> shift) - 1, last = (highest >> shift) + 1;
    if (last - first + 1 > MAX_OUTPUT) return NULL;
    size_t entries = (size_t)(last - first + 1);
    wi_color_shaper *shaper = aligned_alloc(16, (sizeof *shaper + entries + 15) & ~(size_t)15);
    if (!shaper) return NULL;
    memset(shaper, 0, sizeof *shaper);
    for (int c = 0; c < 3; c++)
        for (int v = 0; v < 256; v++)
            for (int r = 0; r < 3; r++) shaper->input[c][v][r] = tables[c][v][r];
    uint8_t curve[OUTPUT_SIZE];
    if (!fill_output(srgb, curve)) { free(shaper); return NULL; }
    for (int64_t i = first; i <= last; i++) shaper->output[i - first] = curve[i < 0 ? 0 : i > (1 << INDEX_BITS) ? (1 << INDEX_BITS) : i];
    shaper->offset = (int32_t)-first;
    return shaper;
}

void wi_color_shaper_apply(const wi_color_shaper *shaper, uint8_t *pixels, size_t count) {
    const wi_v4 *red = shaper->input[0], *green = shaper->input[1], *blue = shaper->input[2];
    const uint8_t *out = shaper->output;
    // Rounding and the offset of linear 0, added before the shift.
    const int32_t bias = (1 << (LINEAR_BITS - INDEX_BITS - 1)) + (shaper->offset << (LINEAR_BITS - INDEX_BITS));
    const wi_v4 biases = { bias, bias, bias, bias };
    for (size_t i = 0; i < count; i++, pixels += 4) {
        wi_v4 v = red[pixels[0]] + green[pixels[1]] + blue[pixels[2]] + biases;
        v >>= LINEAR_BITS - INDEX_BITS;
        pixels[0] = out[v[0]];
        pixels[1] = out[v[1]];
        pixels[2] = out[v[2]];
    }
}

void wi_color_shaper_free(wi_color_shaper *shaper) { free(shaper); }

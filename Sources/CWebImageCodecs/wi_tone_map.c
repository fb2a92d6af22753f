// HDR to SDR: PQ (SMPTE ST 2084) and HLG (ARIB STD-B67) pixels of BT.2100 mapped to sRGB with
// the EETF of ITU-R BT.2390 (a Hermite knee in the PQ domain) applied to the largest of the
// three linear components, so that a pixel's hue and saturation stay while its level is
// compressed. HLG is first brought to display light by its OOTF for a nominal 1000 cd/m²
// display (BT.2100: gamma 1.2 on the scene luminance). The SDR display is taken as BT.2408's
// reference white (203 cd/m²): the source's peak is compressed to it, levels below the knee
// (about 95 cd/m² for a 1000 cd/m² peak) keep their light. The primaries are converted to
// BT.709 by one matrix and what falls outside is clipped.
//
// Tables: a sample's top 12 bits index its linear value times its channel's column of the
// matrix (one four-float look-up a channel; the three summed are the converted pixel). For PQ
// the EETF's gain is a table over the largest of the three codes (the EOTF is monotonic, so
// the largest code has the largest linear value). HLG's OOTF and gain are tables over the bits
// of a float (its luminance, its largest display value), spaced in proportion rather than evenly.
// sRGB's curve is a table over every value a mapped pixel can take, for 8 and for 16 bits.
#include "wi_internal.h"
#include <math.h>
#include <stdlib.h>

enum {
    CODE_BITS = 12,
    CODE_SIZE = 1 << CODE_BITS,
    // HLG's tables are indexed by a float's bits: its exponent and top mantissa bits, so that
    // entries are spaced evenly in proportion (a log scale) between a floor and a ceiling.
    OOTF_SHIFT = 16,              // Ys^(gamma - 1): 128 entries an octave
    OOTF_LOW = 0x3d800000u,       // 2^-4 (Ys in units of ENCODE8_STEPS per unit of light)
    OOTF_HIGH = 0x46ffffffu,      // just under 2^15 (Ys of 1 is 2^14)
    OOTF_SIZE = ((OOTF_HIGH - OOTF_LOW) >> OOTF_SHIFT) + 1,
    GAIN_SHIFT = 14,              // the EETF's gain: 512 entries an octave
    GAIN_LOW = 0x3d800000u,       // 2^-4 of SDR white: far below the knee, where the gain is 1
    GAIN_HIGH = 0x40ffffffu,      // just under 8 (the peak is at most 1000 / 203)
    GAIN_SIZE = ((GAIN_HIGH - GAIN_LOW) >> GAIN_SHIFT) + 1,
    ENCODE8_STEPS = 16384,        // sRGB's curve to 8 bits: entries per unit of linear value
    ENCODE16_STEPS = 4 * ENCODE8_STEPS, // and to 16 bits
};

typedef float wi_f4 __attribute__((vector_size(16)));

struct wi_tone_map {
    // A code's linear value times the matrix's column for its channel (source primaries to
    // BT.709), in units of SDR white times ENCODE8_STEPS (so that the sum, after the gain, is
    // an index of the 8-bit table); the fourth lane its share of the luminance (HLG's OOTF).
    wi_f4 column[3][CODE_SIZE];
    int transfer;
    wi_f4 gain[CODE_SIZE];            // PQ: the EETF's gain for the largest code, in every lane
    float linear[CODE_SIZE];          // a code's linear value (scene light for HLG)
    float hlg_gain[GAIN_SIZE];        // HLG: the gain for the largest display value
    float ootf[OOTF_SIZE];            // HLG: (peak / white) * Ys^0.2
    // sRGB's curve by table, over every value a mapped pixel can take: the gain brings each
    // source component to at most 1, so a converted one lies within the matrix's row sums of
    // its negative and positive coefficients (no clipping needed; the ends hold 0 and 1).
    float offset8[4], offset16[4];    // index of linear 0, plus a half for rounding
    uint8_t *encode8;
    uint16_t *encode16;
};

static const double reference_white = 203.0;     // cd/m², BT.2408
static const double hlg_peak = 1000.0;           // the nominal HLG display (BT.2100)

// ---- The curves (BT.2100) ----

static const double pq_m1 = 2610.0 / 16384, pq_m2 = 2523.0 / 4096 * 128, pq_c1 = 3424.0 / 4096,
                    pq_c2 = 2413.0 / 4096 * 32, pq_c3 = 2392.0 / 4096 * 32;

// PQ signal (0...1) to cd/m².
static double pq_eotf(double e) {
    double p = pow(e < 0 ? 0 : e, 1 / pq_m2);
    double v = fmax(p - pq_c1, 0) / (pq_c2 - pq_c3 * p);
    return 10000 * pow(v, 1 / pq_m1);
}

// cd/m² to PQ signal.
static double pq_inverse(double nits) {
    double y = pow(fmax(nits, 0) / 10000, pq_m1);
    return pow((pq_c1 + pq_c2 * y) / (1 + pq_c3 * y), pq_m2);
}

// HLG signal to scene-linear light (0...1).
static double hlg_inverse_oetf(double e) {
    const double a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * log(4 * a);
    if (e <= 0.5) return e * e / 3;
    return (exp((e - c) / a) + b) / 12;
}

// BT.2390's EETF: display light `nits` of a source mastered up to `source_peak`, compressed
// into [0, target_peak] in the PQ domain (black levels 0).
static double eetf(double nits, double source_peak, double target_peak) {
    double source_max = pq_inverse(source_peak);
    double e1 = fmin(pq_inverse(nits) / source_max, 1);
    double max_lum = pq_inverse(target_peak) / source_max;
    double ks = 1.5 * max_lum - 0.5;
    double e2 = e1;
    if (e1 >= ks && ks < 1) {
        double t = (e1 - ks) / (1 - ks), t2 = t * t, t3 = t2 * t;
        e2 = (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + t) * (1 - ks) + (-2 * t3 + 3 * t2) * max_lum;
    }
    return pq_eotf(e2 * source_max);
}

// sRGB's encoding of linear light (0...1).
static double srgb_encode(double v) {
    return v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055;
}

// ---- Primaries ----

static int primaries_of(int code, double xy[8]) {
    static const double bt709[8] = { 0.640, 0.330, 0.300, 0.600, 0.150, 0.060, 0.3127, 0.3290 };
    static const double bt2020[8] = { 0.708, 0.292, 0.170, 0.797, 0.131, 0.046, 0.3127, 0.3290 };
    static const double p3[8] = { 0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.3127, 0.3290 };
    const double *from = code == 1 ? bt709 : code == 9 ? bt2020 : code == 12 ? p3 : NULL;
    if (!from) return 0;
    for (int i = 0; i < 8; i++) xy[i] = from[i];
    return 1;
}

static double det3(const double m[9]) {
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
}

static void invert3(const double m[9], double out[9]) {
    double d = det3(m);
    out[0] = (m[4] * m[8] - m[5] * m[7]) / d; out[1] = (m[2] * m[7] - m[1] * m[8]) / d; out[2] = (m[1] * m[5] - m[2] * m[4]) / d;
    out[3] = (m[5] * m[6] - m[3] * m[8]) / d; out[4] = (m[0] * m[8] - m[2] * m[6]) / d; out[5] = (m[2] * m[3] - m[0] * m[5]) / d;
    out[6] = (m[3] * m[7] - m[4] * m[6]) / d; out[7] = (m[1] * m[6] - m[0] * m[7]) / d; out[8] = (m[0] * m[4] - m[1] * m[3]) / d;
}

// RGB to XYZ for primaries and white given as CIE x, y.
static void rgb_to_xyz(const double xy[8], double m[9]) {
    double p[9];
    for (int c = 0; c < 3; c++) {
        double x = xy[2 * c], y = xy[2 * c + 1];
        p[c] = x / y; p[3 + c] = 1; p[6 + c] = (1 - x - y) / y;
    }
    double white[3] = { xy[6] / xy[7], 1, (1 - xy[6] - xy[7]) / xy[7] }, inverse[9];
    invert3(p, inverse);
    for (int c = 0; c < 3; c++) {
        double s = inverse[3 * c] * white[0] + inverse[3 * c + 1] * white[1] + inverse[3 * c + 2] * white[2];
        for (int r = 0; r < 3; r++) m[3 * r + c] = p[3 * r + c] * s;
    }
}

// ---- Building ----

static float float_of(uint32_t bits) {
    union { uint32_t bits; float value; } u = { bits };
    return u.value;
}

static int32_t bits_of(float value) {
    union { float value; int32_t bits; } u = { value };
    return u.bits;
}

int wi_tone_map_create(int primaries, int transfer, double source_peak, wi_tone_map **out) {
    *out = NULL;
    double source_xy[8], bt709_xy[8];
    if ((transfer != WI_TRANSFER_PQ && transfer != WI_TRANSFER_HLG) || !primaries_of(primaries, source_xy)) return WI_ERR_UNSUPPORTED;
    primaries_of(1, bt709_xy);
    wi_tone_map *map = calloc(1, sizeof *map);
    if (!map) return WI_ERR_NO_MEMORY;
    map->transfer = transfer;
    double peak = transfer == WI_TRANSFER_HLG ? hlg_peak : (source_peak > 0 ? fmin(source_peak, 10000) : 1000);

    double source[9], bt709[9], to709[9], m[9];
    rgb_to_xyz(source_xy, source);
    rgb_to_xyz(bt709_xy, bt709);
    invert3(bt709, to709);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            m[3 * r + c] = to709[3 * r] * source[c] + to709[3 * r + 1] * source[3 + c] + to709[3 * r + 2] * source[6 + c];

    for (int i = 0; i < CODE_SIZE; i++) {
        // Code i holds the samples whose top 12 bits are i: it stands for the middle of them.
        double e = (i * 16 + 7.5) / 65535;
        if (transfer == WI_TRANSFER_PQ) {
            double nits = pq_eotf(e);
            float gain = nits > 0 ? (float)(eetf(nits, peak, reference_white) / nits) : 1;
            map->linear[i] = (float)(nits / reference_white);
            map->gain[i] = (wi_f4){ gain, gain, gain, gain };
        } else {
            map->linear[i] = (float)hlg_inverse_oetf(e);
            map->gain[i] = (wi_f4){ 1, 1, 1, 1 };
        }
        // The luminance weights of the source primaries: the middle row of RGB -> XYZ.
        for (int c = 0; c < 3; c++) {
            double v = map->linear[i];
            double k = ENCODE8_STEPS;
            map->column[c][i] = (wi_f4){ (float)(k * m[c] * v), (float)(k * m[3 + c] * v), (float)(k * m[6 + c] * v),
                                         (float)(k * source[3 + c] * v) };
        }
    }
    // HLG's OOTF: display light = peak * Ys^(gamma - 1) * scene light, gamma 1.2 at 1000 cd/m².
    // Each entry stands for the middle of its run of floats.
    for (uint32_t i = 0; i < OOTF_SIZE; i++) {
        double ys = float_of(OOTF_LOW + (i << OOTF_SHIFT) + (1u << (OOTF_SHIFT - 1))) / ENCODE8_STEPS;
        map->ootf[i] = (float)(peak / reference_white * pow(ys, 0.2));
    }
    for (uint32_t i = 0; i < GAIN_SIZE; i++) {
        double v = float_of(GAIN_LOW + (i << GAIN_SHIFT) + (1u << (GAIN_SHIFT - 1))), nits = v * reference_white;
        map->hlg_gain[i] = (float)(eetf(nits, peak, reference_white) / nits);
    }
    double low = 0, high = 0;
    for (int r = 0; r < 3; r++) {
        double negative = 0, positive = 0;
        for (int c = 0; c < 3; c++) {
            if (m[3 * r + c] < 0) negative += m[3 * r + c]; else positive += m[3 * r + c];
        }
        low = fmin(low, negative);
        high = fmax(high, positive);
    }
    // A little beyond the ends, for float rounding of the sums.
    low -= 1.0 / 256;
    high += 1.0 / 256;
    size_t size8 = (size_t)ceil((high - low) * ENCODE8_STEPS) + 2, size16 = (size_t)ceil((high - low) * ENCODE16_STEPS) + 2;
    map->encode8 = malloc(size8);
    map->encode16 = malloc(size16 * sizeof(uint16_t));
    if (!map->encode8 || !map->encode16) {
        wi_tone_map_free(map);
        return WI_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < size8; i++) {
        double v = fmin(fmax(low + (double)i / ENCODE8_STEPS, 0), 1);
        map->encode8[i] = (uint8_t)lrint(srgb_encode(v) * 255);
    }
    for (size_t i = 0; i < size16; i++) {
        double v = fmin(fmax(low + (double)i / ENCODE16_STEPS, 0), 1);
        map->encode16[i] = (uint16_t)lrint(srgb_encode(v) * 65535);
    }
    for (int lane = 0; lane < 4; lane++) {
        map->offset8[lane] = (float)(-low * ENCODE8_STEPS + 0.5);
        map->offset16[lane] = (float)(-low * ENCODE16_STEPS + 0.5);
    }
    *out = map;
    return WI_OK;
}

void wi_tone_map_free(wi_tone_map *map) {
    if (!map) return;
    free(map->encode8);
    free(map->encode16);
    free(map);
}

// ---- Applying ----

typedef int32_t wi_i4 __attribute__((vector_size(16)));
typedef uint32_t wi_u4 __attribute__((vector_size(16)));

// The entry of `table` (of 16-byte entries) for a sample's top 12 bits: the sample with its low
// four bits cleared is the entry's byte offset.
#define ENTRY(table, sample) (*(const wi_f4 *)((const char *)(table) + ((sample) & 0xfff0u)))

// One pixel's three BT.709 linear values (not clipped: a converted value may lie a little
// outside [0, 1]) in the first three lanes, as indices of an encoding table: `scale` times
// ENCODE8_STEPS entries per unit, linear 0 at `offset`. `pq` is a constant where it is
// inlined, so that each transfer has a loop of its own.
static inline __attribute__((always_inline)) wi_u4 map_pixel(const wi_tone_map *restrict map, const uint16_t *in, int pq,
                                                             float scale, wi_f4 offset) {
    // Each sample's top 12 bits, in place: the byte offset of its entry (the largest of the
    // three is then one too).
    unsigned r = in[0] & 0xfff0u, g = in[1] & 0xfff0u, b = in[2] & 0xfff0u;
    unsigned largest = r > g ? r : g;
    largest = largest > b ? largest : b;
    // The matrix is linear: the sum of the columns is the converted pixel before the gain.
    wi_f4 v = ENTRY(map->column[0], r) + ENTRY(map->column[1], g) + ENTRY(map->column[2], b);
    if (pq) {
        v *= ENTRY(map->gain, largest);
    } else {
        // The OOTF scales all three alike; the largest display value is the largest code's
        // scene light (the inverse OETF is monotonic) times it, at most the table's end.
        int32_t ys = __builtin_elementwise_min(__builtin_elementwise_max(bits_of(v[3]), (int32_t)OOTF_LOW), (int32_t)OOTF_HIGH);
        float ootf = map->ootf[(uint32_t)(ys - OOTF_LOW) >> OOTF_SHIFT];
        int32_t top = bits_of(map->linear[largest >> 4] * ootf);
        top = __builtin_elementwise_min(__builtin_elementwise_max(top, (int32_t)GAIN_LOW), (int32_t)GAIN_HIGH);
        v *= ootf * map->hlg_gain[(uint32_t)(top - GAIN_LOW) >> GAIN_SHIFT];
    }
    if (scale != 1) v *= scale;
    // Unsigned (every index is at least 0): an index then needs no sign extension.
    return (wi_u4)__builtin_convertvector(v + offset, wi_i4);
}

static inline __attribute__((always_inline)) void map_to_16(const wi_tone_map *restrict map, const uint16_t *in, size_t count,
                                                            uint16_t *dst, int pq) {
    const wi_f4 offset = { map->offset16[0], map->offset16[1], map->offset16[2], map->offset16[3] };
    for (size_t i = 0; i < count; i++, in += 4, dst += 4) {
        uint16_t alpha = in[3];
        wi_u4 index = map_pixel(map, in, pq, ENCODE16_STEPS / ENCODE8_STEPS, offset);
        dst[0] = map->encode16[index[0]];
        dst[1] = map->encode16[index[1]];
        dst[2] = map->encode16[index[2]];
        dst[3] = alpha;
    }
}

// One pixel as RGBA8 in a little-endian word. Alpha: round(a / 257) as (a * 255 + 32895) >> 16,
// exact for every a, or 255 where the pixel is known to be opaque (`opaque`, a constant where it
// is inlined).
static inline __attribute__((always_inline)) uint32_t pixel_to_8(const wi_tone_map *restrict map, const uint16_t *in, int pq,
                                                                 wi_f4 offset, int opaque) {
    uint32_t alpha = opaque ? 255u : (in[3] * 255u + 32895u) >> 16;
    wi_u4 index = map_pixel(map, in, pq, 1, offset);
    return (uint32_t)map->encode8[index[0]] | (uint32_t)map->encode8[index[1]] << 8 | (uint32_t)map->encode8[index[2]] << 16
        | alpha << 24;
}

// One pixel to RGBA8. In place the output trails the input (4 bytes a pixel behind 8): the
// input is read first.
static inline __attribute__((always_inline)) void map_one_to_8(const wi_tone_map *restrict map, const uint16_t *in, uint8_t *dst,
                                                               int pq, wi_f4 offset, int opaque) {
    uint32_t pixel = pixel_to_8(map, in, pq, offset, opaque);
    uint8_t bytes[4] = { (uint8_t)pixel, (uint8_t)(pixel >> 8), (uint8_t)(pixel >> 16), (uint8_t)(pixel >> 24) };
    __builtin_memcpy(dst, bytes, 4);
}

typedef uint64_t wi_q2 __attribute__((vector_size(16), aligned(8)));

// Whether the next `count` pixels are all opaque (alpha 65535): their bits ANDed, two pixels a
// vector, eight a turn.
static inline int all_opaque(const uint16_t *in, size_t count) {
    const wi_q2 *v = (const wi_q2 *)in;
    wi_q2 a = ~(wi_q2){ 0, 0 }, b = a, c = a, d = a;
    size_t i = 0;
    for (; i + 8 <= count; i += 8, v += 4) { a &= v[0]; b &= v[1]; c &= v[2]; d &= v[3]; }
    for (; i + 2 <= count; i += 2, v++) a &= v[0];
    a &= b & c & d;
    uint64_t all = a[0] & a[1];
    if (i < count) {
        uint64_t last;
        __builtin_memcpy(&last, v, 8);
        all &= last;
    }
    return (all >> 48) == 0xffff;
}

static inline __attribute__((always_inline)) void map_block_to_8(const wi_tone_map *restrict map, const uint16_t *in, size_t count,
                                                                 uint8_t *dst, int pq, wi_f4 offset, int opaque) {
    // Four pixels a turn, written as one 16-byte store once all four are read (in place, the
    // store ends before the next turn's input): the loop's own count and compare are shared by
    // four.
    for (; count >= 4; count -= 4, in += 16, dst += 16) {
        wi_u4 quad = { pixel_to_8(map, in, pq, offset, opaque), pixel_to_8(map, in + 4, pq, offset, opaque),
                       pixel_to_8(map, in + 8, pq, offset, opaque), pixel_to_8(map, in + 12, pq, offset, opaque) };
        __builtin_memcpy(dst, &quad, sizeof quad);
    }
    for (; count > 0; count--, in += 4, dst += 4) map_one_to_8(map, in, dst, pq, offset, opaque);
}

// Blocks of 64 pixels, each first checked for alpha: an opaque block (every pixel of an image
// without alpha) writes 255 instead of converting each alpha.
static inline __attribute__((always_inline)) void map_to_8(const wi_tone_map *restrict map, const uint16_t *in, size_t count,
                                                           uint8_t *dst, int pq) {
    const wi_f4 offset = { map->offset8[0], map->offset8[1], map->offset8[2], map->offset8[3] };
    enum { BLOCK = 64 };
    while (count > 0) {
        size_t n = count < BLOCK ? count : BLOCK;
        if (all_opaque(in, n)) map_block_to_8(map, in, n, dst, pq, offset, 1);
        else map_block_to_8(map, in, n, dst, pq, offset, 0);
        in += n * 4;
        dst += n * 4;
        count -= n;
    }
}

// The 8-bit loops, built twice on x86-64, for AVX2 and for any x86-64, and chosen by the CPU
// when the library loads: the AVX2 build's three-operand forms and element extractions make the
// same steps fewer instructions (Benchmarks/README.md, "The tone map built for AVX2"; the 16-bit
// loops gain nothing from it, so they have one build). The same arithmetic, no FMA: the two
// give the same bytes. Sanitized builds have only the portable one, which the tests then run on
// an AVX2 machine too.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define WI_SANITIZED 1
#endif
#endif
#if defined(__x86_64__) && defined(__linux__) && !defined(WI_SANITIZED)
__attribute__((target_clones("avx2", "default")))
#endif
static void map_8(const wi_tone_map *restrict map, const uint16_t *in, size_t count, uint8_t *dst, int pq) {
    if (pq) map_to_8(map, in, count, dst, 1); else map_to_8(map, in, count, dst, 0);
}

void wi_tone_map_apply(const wi_tone_map *restrict map, const uint16_t *in, size_t count, void *out, int deep) {
    int pq = map->transfer == WI_TRANSFER_PQ;
    if (deep) {
        if (pq) map_to_16(map, in, count, out, 1); else map_to_16(map, in, count, out, 0);
    } else {
        map_8(map, in, count, out, pq);
    }
}

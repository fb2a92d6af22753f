// Area-averaging downscale of RGBA8 bitmaps (Bitmap.areaDownscaled, and PNG rows as libpng
// inflates them): each output pixel is the coverage-weighted mean of the source pixels under
// it, in premultiplied alpha unless the bitmap is opaque. Separable, and fed a source row at a
// time: each row is reduced horizontally, once, into a row of float pixels, which the vertical
// pass adds to the sums of the output rows it covers; an output row is written when complete.
// Four-float vectors (GCC and Clang vector extensions) keep a pixel's channels in one register.
#include "wi_codecs.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef float wi_v4f __attribute__((vector_size(16)));
typedef int32_t wi_v4i __attribute__((vector_size(16)));
typedef uint16_t wi_v8u __attribute__((vector_size(16)));
typedef uint32_t wi_v8w __attribute__((vector_size(32)));
typedef uint8_t wi_v16b __attribute__((vector_size(16)));
typedef uint8_t wi_v4b __attribute__((vector_size(4)));

/// The fixed-point weights of a span sum to this (the largest a 16-bit weight can be).
#define WI_FIXED_ONE 65535

/// For each target index: the first source index it covers, how many, and where their weights start.
typedef struct { uint32_t start, count, offset; } wi_span;

/// Spans and weights (summing to 1 for each target index) of `source` indices over `target` ones.
static int wi_area_weights(uint32_t source, uint32_t target, wi_span **spans_out, float **weights_out) {
    double ratio = (double)source / (double)target;
    // A target index covers at most ceil(ratio) + 1 source indices.
    size_t per = (size_t)ratio + 2;
    wi_span *spans = malloc(sizeof *spans * target);
    float *weights = malloc(sizeof *weights * per * target);
    if (!spans || !weights) { free(spans); free(weights); return 0; }
    uint32_t offset = 0;
    for (uint32_t t = 0; t < target; t++) {
        double lo = (double)t * ratio, hi = (double)(t + 1) * ratio;
        int64_t first = (int64_t)lo;
        double up = hi - 1e-9;
        int64_t ceiling = (int64_t)up; if ((double)ceiling < up) ceiling++;
        int64_t last = ceiling - 1;
        if (last > (int64_t)source - 1) last = (int64_t)source - 1;
        if (last < first) last = first;
        for (int64_t s = first; s <= last; s++) {
            double from = lo > (double)s ? lo : (double)s;
            double to = hi < (double)(s + 1) ? hi : (double)(s + 1);
            double cover = to - from;
            weights[offset + (s - first)] = (float)((cover > 0 ? cover : 0) / ratio);
        }
        spans[t] = (wi_span){ (uint32_t)first, (uint32_t)(last - first + 1), offset };
        offset += (uint32_t)(last - first + 1);
    }
    *spans_out = spans; *weights_out = weights;
    return 1;
}

static inline wi_v4f wi_load_pixel(const uint8_t *p) {
    return (wi_v4f){ (float)p[0], (float)p[1], (float)p[2], (float)p[3] };
}

/// A source row with alpha reduced to the target's width, premultiplied.
static void wi_area_reduce_row(const uint8_t *row, const wi_span *spans, const float *weights,
                               uint32_t target_width, wi_v4f *out) {
    for (uint32_t t = 0; t < target_width; t++) {
        const wi_span span = spans[t];
        const uint8_t *p = row + (size_t)span.start * 4;
        const float *w = weights + span.offset;
        // Two sums, even and odd taps: a wide span is not one long chain of dependent adds.
        wi_v4f even = {0, 0, 0, 0}, odd = {0, 0, 0, 0};
        for (uint32_t k = 0; k < span.count; k++) {
            wi_v4f pixel = wi_load_pixel(p + k * 4);
            float alpha = pixel[3] * w[k];
            pixel *= alpha;
            pixel[3] = alpha;
            if (k & 1) odd += pixel; else even += pixel;
        }
        out[t] = even + odd;
    }
}

/// The high half of each 16-bit product (the multiply of the fixed-point path).
static inline wi_v8u wi_mulhi(wi_v8u a, wi_v8u b) {
    return __builtin_convertvector((__builtin_convertvector(a, wi_v8w) * __builtin_convertvector(b, wi_v8w)) >> 16, wi_v8u);
}

/// The weights of `spans` in 16-bit fixed point, summing to WI_FIXED_ONE for each span (the
/// rounding's remainder given to its largest weight), in the layout of `weights`.
static uint16_t *wi_area_fixed_spans(const wi_span *spans, const float *weights, uint32_t target) {
    const size_t count = (size_t)spans[target - 1].offset + spans[target - 1].count;
    uint16_t *fixed = malloc(sizeof *fixed * count);
    if (!fixed) return NULL;
    for (uint32_t t = 0; t < target; t++) {
        const wi_span span = spans[t];
        uint32_t sum = 0, largest = span.offset;
        for (uint32_t k = span.offset; k < span.offset + span.count; k++) {
            long q = lrintf(weights[k] * WI_FIXED_ONE);
            fixed[k] = (uint16_t)(q < 0 ? 0 : q > WI_FIXED_ONE ? WI_FIXED_ONE : q);
            sum += fixed[k];
            if (fixed[k] > fixed[largest]) largest = k;
        }
        fixed[largest] = (uint16_t)((int32_t)fixed[largest] + (int32_t)WI_FIXED_ONE - (int32_t)sum);
    }
    return fixed;
}

/// The horizontal weights of `spans` in 16-bit fixed point (`wi_area_fixed_spans`), over a
/// window of the same `taps` source pixels for every target pixel (the widest span's count): a
/// span's weights at their place in its window, zero elsewhere, so that the loop over a row has
/// no branch that depends on the span. A window starts where its span does, or earlier at the
/// row's end (`starts`). Two taps a vector: the first tap's weight in lanes 0-3, the next one's
/// in lanes 4-7.
static int wi_area_fixed_windows(const wi_span *spans, const float *weights, uint32_t source, uint32_t target,
                                 wi_v8u **fixed_out, uint32_t **starts_out, uint32_t *taps_out) {
    uint32_t widest = 0;
    for (uint32_t t = 0; t < target; t++) widest = spans[t].count > widest ? spans[t].count : widest;
    const size_t per = (widest + 1) / 2;
    uint16_t *spanned = wi_area_fixed_spans(spans, weights, target);
    wi_v8u *fixed = aligned_alloc(16, sizeof *fixed * per * target);
    uint32_t *starts = malloc(sizeof *starts * target);
    uint16_t *taps = malloc(sizeof *taps * (per * 2));
    if (!spanned || !fixed || !starts || !taps) { free(spanned); free(fixed); free(starts); free(taps); return 0; }
    wi_v8u *at = fixed;
    for (uint32_t t = 0; t < target; t++) {
        const wi_span span = spans[t];
        // The window lies within the row: a span ends at most at the row's end, and is at
        // most `widest` long.
        const uint32_t first = span.start + widest <= source ? span.start : source - widest, shift = span.start - first;
        memset(taps, 0, sizeof *taps * per * 2);
        memcpy(taps + shift, spanned + span.offset, sizeof *taps * span.count);
        for (size_t k = 0; k < per * 2; k += 2, at++) {
            uint16_t a = taps[k], b = taps[k + 1];
            *at = (wi_v8u){ a, a, a, a, b, b, b, b };
        }
        starts[t] = first;
    }
    free(spanned);
    free(taps);
    *fixed_out = fixed; *starts_out = starts; *taps_out = widest;
    return 1;
}

/// The low eight bytes of `x` (two pixels) widened to 16 bits, each as its value * 256.
static inline wi_v8u wi_widen_low(wi_v16b x) {
    const wi_v16b zero = {0};
    return (wi_v8u)__builtin_shufflevector(zero, x, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}

/// Sixteen bytes of an opaque source row times a row's `weight`, added to `sums` (or starting
/// them, `start`, a constant where this is inlined).
static inline __attribute__((always_inline)) void wi_area_add_bytes(wi_v16b x, wi_v8u weight, wi_v8u *sums, int start) {
    const wi_v16b zero = {0};
    const wi_v16b high = __builtin_shufflevector(x, zero, 8, 9, 10, 11, 12, 13, 14, 15, 16, 16, 16, 16, 16, 16, 16, 16);
    const wi_v8u low_part = wi_mulhi(wi_widen_low(x), weight), high_part = wi_mulhi(wi_widen_low(high), weight);
    sums[0] = start ? low_part : sums[0] + low_part;
    sums[1] = start ? high_part : sums[1] + high_part;
}

/// `wi_area_add_row` with `start` a constant where it is inlined: the last bytes of a row
/// whose length is not a multiple of 16 are read into a zeroed vector.
static inline __attribute__((always_inline)) void wi_area_add_row_to(const uint8_t *row, size_t bytes, uint16_t weight,
                                                                    wi_v8u *sums, int start) {
    const wi_v8u w = { weight, weight, weight, weight, weight, weight, weight, weight };
    size_t i = 0;
    for (; i + 16 <= bytes; i += 16, sums += 2) {
        wi_v16b x;
        memcpy(&x, row + i, 16);
        wi_area_add_bytes(x, w, sums, start);
    }
    if (i < bytes) {
        wi_v16b x = {0};
        memcpy(&x, row + i, bytes - i);
        wi_area_add_bytes(x, w, sums, start);
    }
}

/// An opaque source row, `bytes` long, times `weight` (16-bit fixed point), added to the output
/// row's `sums` (in units of 1/256 of a level times WI_FIXED_ONE / 65536; they cannot overflow:
/// an output row's weights sum to less than 65536, so a sum stays under 255 * 256), or starting
/// them.
static void wi_area_add_row(const uint8_t *row, size_t bytes, uint16_t weight, wi_v8u *sums, int start) {
    if (start) wi_area_add_row_to(row, bytes, weight, sums, 1);
    else wi_area_add_row_to(row, bytes, weight, sums, 0);
}

/// One output pixel from its window of `taps` summed pixels at `p` times their weights, in the
/// first four lanes. `taps` is a constant where this is inlined. A window ends inside the row:
/// its last tap, when odd, is read on its own.
static inline __attribute__((always_inline)) wi_v8u wi_area_window(const uint16_t *p, const wi_v8u *fixed, uint32_t taps) {
    wi_v8u sum = {0};
    uint32_t k = taps;
    for (; k >= 2; k -= 2, p += 8, fixed++) {
        wi_v8u x;
        memcpy(&x, p, 16);
        sum += wi_mulhi(x, fixed[0]);
    }
    if (k) {
        wi_v8u x = {0};
        memcpy(&x, p, 8);
        sum += wi_mulhi(x, fixed[0]);
    }
    return sum + __builtin_shufflevector(sum, sum, 4, 5, 6, 7, 0, 1, 2, 3);
}

/// An opaque output row from its sums: each pixel's window reduced, then rounded to bytes.
/// `round` holds, for each output pixel, a half (128 units), one unit for the two fixed-point
/// scales (each WI_FIXED_ONE / 65536) and the mean loss of its horizontal products' truncation
/// (half a unit each), in every lane; `row_loss` that of the output row's vertical products.
static inline __attribute__((always_inline)) void wi_area_emit_fixed_taps(
        const uint16_t *sums, const uint32_t *starts, const wi_v8u *fixed, const wi_v8u *round, uint16_t row_loss,
        uint32_t target_width, uint32_t taps, uint8_t *out) {
    const size_t per = (taps + 1) / 2;
    const wi_v8u loss = { row_loss, row_loss, row_loss, row_loss, row_loss, row_loss, row_loss, row_loss };
    const wi_v4b opaque = { 0, 0, 0, 255 };
    for (uint32_t t = 0; t < target_width; t++, fixed += per) {
        const wi_v8u v = (wi_area_window(sums + (size_t)starts[t] * 4, fixed, taps) + round[t] + loss) >> 8;
        const wi_v4b bytes = __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3), wi_v4b) | opaque;
        memcpy(out + (size_t)t * 4, &bytes, 4);
    }
}

/// `wi_area_emit_fixed_taps` with its window's width a constant for the common ones (a
/// downscale by up to 2, 3 or 5 after a decode at size), so that its loop is unrolled.
static void wi_area_emit_fixed(const uint16_t *sums, const uint32_t *starts, const wi_v8u *fixed, const wi_v8u *round,
                               uint16_t row_loss, uint32_t target_width, uint32_t taps, uint8_t *out) {
    switch (taps) {
    case 2: wi_area_emit_fixed_taps(sums, starts, fixed, round, row_loss, target_width, 2, out); break;
    case 3: wi_area_emit_fixed_taps(sums, starts, fixed, round, row_loss, target_width, 3, out); break;
    case 4: wi_area_emit_fixed_taps(sums, starts, fixed, round, row_loss, target_width, 4, out); break;
    case 6: wi_area_emit_fixed_taps(sums, starts, fixed, round, row_loss, target_width, 6, out); break;
    default: wi_area_emit_fixed_taps(sums, starts, fixed, round, row_loss, target_width, taps, out); break;
    }
}

struct wi_area_stream {
    uint32_t width, height, target_width, target_height;
    int opaque;
    uint8_t *dst;
    wi_span *hspans, *vspans;
    float *hweights, *vweights;
    // Opaque: the horizontal weights in fixed point, a window each, where each window starts,
    // how wide they are, and each output pixel's rounding; the vertical weights in fixed point;
    // the output row being summed, and the next when a row feeds both (source pixels wide).
    wi_v8u *hfixed, *hround;
    uint32_t *hstarts;
    uint32_t htaps;
    uint16_t *vfixed;
    wi_v8u *columns, *next_columns, *column_memory;
    // With alpha: the newest source row, reduced to the target's width, and the output row
    // being summed and the next, in one allocation.
    wi_v4f *rows;
    wi_v4f *reduced;
    wi_v4f *sum, *next_sum;
    uint32_t next;            // the source row expected next
    uint32_t target;          // the output row being summed
    uint32_t first, end;      // the output rows written: [first, end), the first at dst
};

void wi_area_stream_free(wi_area_stream *s) {
    if (!s) return;
    free(s->hspans); free(s->hweights); free(s->vspans); free(s->vweights); free(s->rows);
    free(s->hfixed); free(s->hround); free(s->hstarts); free(s->vfixed); free(s->column_memory);
    free(s);
}

wi_area_stream *wi_area_stream_create(uint32_t width, uint32_t height, int opaque,
                                      uint8_t *dst, uint32_t target_width, uint32_t target_height) {
    return wi_area_stream_create_band(width, height, opaque, dst, target_width, target_height, 0, target_height);
}

wi_area_stream *wi_area_stream_create_band(uint32_t width, uint32_t height, int opaque, uint8_t *dst,
                                           uint32_t target_width, uint32_t target_height, uint32_t first, uint32_t count) {
    if (!dst || width == 0 || height == 0 || target_width == 0 || target_height == 0 ||
        target_width > width || target_height > height || count == 0 || first > target_height - count) return NULL;
    wi_area_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->width = width; s->height = height; s->target_width = target_width; s->target_height = target_height;
    s->opaque = opaque; s->dst = dst;
    if (!wi_area_weights(width, target_width, &s->hspans, &s->hweights) ||
        !wi_area_weights(height, target_height, &s->vspans, &s->vweights)) {
        wi_area_stream_free(s);
        return NULL;
    }
    // The band's first source row is its first output row's first: that row starts the sums.
    s->first = s->target = first;
    s->end = first + count;
    s->next = s->vspans[first].start;
    if (opaque) {
        // Two vectors of sums for each 16 bytes of a row (its last ones padded).
        const size_t vectors = ((size_t)width * 4 + 15) / 16 * 2;
        if (!wi_area_fixed_windows(s->hspans, s->hweights, width, target_width, &s->hfixed, &s->hstarts, &s->htaps) ||
            !(s->vfixed = wi_area_fixed_spans(s->vspans, s->vweights, target_height)) ||
            !(s->hround = aligned_alloc(16, sizeof *s->hround * target_width)) ||
            !(s->column_memory = aligned_alloc(16, sizeof *s->column_memory * vectors * 2))) {
            wi_area_stream_free(s);
            return NULL;
        }
        s->columns = s->column_memory;
        s->next_columns = s->column_memory + vectors;
        for (uint32_t t = 0; t < target_width; t++) {
            const uint16_t r = (uint16_t)(129 + s->hspans[t].count / 2);
            s->hround[t] = (wi_v8u){ r, r, r, r, r, r, r, r };
        }
        return s;
    }
    if (!(s->rows = aligned_alloc(16, sizeof *s->rows * (size_t)target_width * 3))) {
        wi_area_stream_free(s);
        return NULL;
    }
    s->reduced = s->rows;
    s->sum = s->rows + target_width;
    s->next_sum = s->rows + (size_t)target_width * 2;
    return s;
}

/// Row `ty` of `dst` (a bitmap with alpha) from its premultiplied sum, back to bytes and straight
/// alpha; adding a half and truncating rounds non-negative values.
static void wi_area_emit(const wi_area_stream *s, const wi_v4f *sum, uint32_t ty) {
    const wi_v4f zero = {0, 0, 0, 0}, top = {255, 255, 255, 255}, half = {0.5f, 0.5f, 0.5f, 0.5f};
    // Read once: the byte stores below may alias anything, `s` included.
    const uint32_t width = s->target_width;
    uint8_t *out = s->dst + (size_t)ty * width * 4;
    for (uint32_t x = 0; x < width; x++) {
        wi_v4f v = sum[x];
        if (v[3] <= 0.0001f) {
            v = zero;
        } else {
            float alpha = v[3];
            v *= 1.0f / alpha;
            v[3] = alpha;
        }
        v += half;
        v = __builtin_elementwise_min(__builtin_elementwise_max(v, zero), top);
        wi_v4b bytes = __builtin_convertvector(__builtin_convertvector(v, wi_v4i), wi_v4b);
        memcpy(out + (size_t)x * 4, &bytes, 4);
    }
}

/// Adds `reduced` times source row `y`'s weight in output row `ty` to `sum` (or starts it).
static void wi_area_add(const wi_area_stream *s, const wi_v4f *reduced, uint32_t y, uint32_t ty, wi_v4f *sum) {
    const wi_span span = s->vspans[ty];
    const float weight = s->vweights[span.offset + (y - span.start)];
    if (y == span.start) {
        for (uint32_t x = 0; x < s->target_width; x++) sum[x] = reduced[x] * weight;
    } else {
        for (uint32_t x = 0; x < s->target_width; x++) sum[x] += reduced[x] * weight;
    }
}

void wi_area_stream_rows(const wi_area_stream *s, uint32_t *first, uint32_t *end) {
    const wi_span last = s->vspans[s->end - 1];
    *first = s->vspans[s->first].start;
    *end = last.start + last.count;
}

int wi_area_stream_row(wi_area_stream *s, const uint8_t *row) {
    if (s->next >= s->height) return WI_ERR_ARGUMENT;
    uint32_t y = s->next++;
    if (s->target >= s->end) return WI_OK;
    // A source row feeds the output row being summed and, when it straddles the boundary, the
    // next one too (the spans of a downscale overlap by at most a row, and such a row always
    // starts the next one's sums); an output row is written as soon as its last source row is in.
    const wi_span span = s->vspans[s->target];
    const int straddles = s->target + 1 < s->target_height && s->vspans[s->target + 1].start <= y;
    if (s->opaque) {
        const size_t bytes = (size_t)s->width * 4;
        wi_area_add_row(row, bytes, s->vfixed[span.offset + (y - span.start)], s->columns, y == span.start);
        if (straddles) wi_area_add_row(row, bytes, s->vfixed[s->vspans[s->target + 1].offset], s->next_columns, 1);
    } else {
        wi_area_reduce_row(row, s->hspans, s->hweights, s->target_width, s->reduced);
        wi_area_add(s, s->reduced, y, s->target, s->sum);
        if (straddles) wi_area_add(s, s->reduced, y, s->target + 1, s->next_sum);
    }
    while (s->target < s->end) {
        const wi_span done = s->vspans[s->target];
        if (y + 1 < done.start + done.count) break;
        if (s->opaque) {
            wi_area_emit_fixed((const uint16_t *)s->columns, s->hstarts, s->hfixed, s->hround, (uint16_t)(done.count / 2),
                               s->target_width, s->htaps, s->dst + (size_t)(s->target - s->first) * s->target_width * 4);
            wi_v8u *swap = s->columns; s->columns = s->next_columns; s->next_columns = swap;
        } else {
            wi_area_emit(s, s->sum, s->target - s->first);
            wi_v4f *swap = s->sum; s->sum = s->next_sum; s->next_sum = swap;
        }
        s->target++;
    }
    return WI_OK;
}

int wi_area_downscale(const uint8_t *src, uint32_t width, uint32_t height, int opaque,
                      uint8_t *dst, uint32_t target_width, uint32_t target_height) {
    if (!src || !dst || width == 0 || height == 0 || target_width == 0 || target_height == 0 ||
        target_width > width || target_height > height) return WI_ERR_ARGUMENT;
    wi_area_stream *s = wi_area_stream_create(width, height, opaque, dst, target_width, target_height);
    if (!s) return WI_ERR_NO_MEMORY;
    for (uint32_t y = 0; y < height; y++) wi_area_stream_row(s, src + (size_t)y * width * 4);
    wi_area_stream_free(s);
    return WI_OK;
}

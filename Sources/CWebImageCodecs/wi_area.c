// Area-averaging downscale of RGBA8 bitmaps (Bitmap.areaDownscaled): each output pixel is the
// coverage-weighted mean of the source pixels under it, in premultiplied alpha unless the
// bitmap is opaque. Separable: source rows are reduced horizontally as the vertical pass needs
// them, each once, into rows of float pixels; the vertical pass sums them for an output row.
// Four-float vectors (GCC and Clang vector extensions) keep a pixel's channels in one register.
#include "wi_codecs.h"
#include <stdlib.h>
#include <string.h>

typedef float wi_v4f __attribute__((vector_size(16)));
typedef int32_t wi_v4i __attribute__((vector_size(16)));

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

/// Source row `row` reduced to the target's width, premultiplied unless `opaque`.
static void wi_area_reduce_row(const uint8_t *row, const wi_span *spans, const float *weights,
                               uint32_t target_width, int opaque, wi_v4f *out) {
    for (uint32_t t = 0; t < target_width; t++) {
        const wi_span span = spans[t];
        const uint8_t *p = row + (size_t)span.start * 4;
        const float *w = weights + span.offset;
        // Two sums, even and odd taps: a wide span is not one long chain of dependent adds.
        wi_v4f even = {0, 0, 0, 0}, odd = {0, 0, 0, 0};
        uint32_t k = 0;
        if (opaque) {
            for (; k + 1 < span.count; k += 2) {
                even += wi_load_pixel(p + k * 4) * w[k];
                odd += wi_load_pixel(p + k * 4 + 4) * w[k + 1];
            }
            if (k < span.count) even += wi_load_pixel(p + k * 4) * w[k];
        } else {
            for (; k < span.count; k++) {
                wi_v4f pixel = wi_load_pixel(p + k * 4);
                float alpha = pixel[3] * w[k];
                pixel *= alpha;
                pixel[3] = alpha;
                if (k & 1) odd += pixel; else even += pixel;
            }
        }
        out[t] = even + odd;
    }
}

int wi_area_downscale(const uint8_t *src, uint32_t width, uint32_t height, int opaque,
                      uint8_t *dst, uint32_t target_width, uint32_t target_height) {
    if (!src || !dst || width == 0 || height == 0 || target_width == 0 || target_height == 0 ||
        target_width > width || target_height > height) return WI_ERR_ARGUMENT;
    wi_span *hspans = NULL, *vspans = NULL;
    float *hweights = NULL, *vweights = NULL;
    wi_v4f *rows = NULL;
    int status = WI_ERR_NO_MEMORY;
    if (!wi_area_weights(width, target_width, &hspans, &hweights)) goto done;
    if (!wi_area_weights(height, target_height, &vspans, &vweights)) goto done;
    // Three rows of float pixels: the newest reduced row, the one before it and the sum.
    rows = aligned_alloc(16, sizeof *rows * (size_t)target_width * 3);
    if (!rows) goto done;
    wi_v4f *reduced = rows, *scratch = rows + target_width, *sum = rows + (size_t)target_width * 2;
    int64_t reduced_row = -1;
    const size_t row_bytes = (size_t)width * 4;
    const wi_v4f zero = {0, 0, 0, 0}, top = {255, 255, 255, 255}, half = {0.5f, 0.5f, 0.5f, 0.5f};
    for (uint32_t ty = 0; ty < target_height; ty++) {
        const wi_span span = vspans[ty];
        for (uint32_t k = 0; k < span.count; k++) {
            uint32_t y = span.start + k;
            if ((int64_t)y != reduced_row) {
                wi_area_reduce_row(src + (size_t)y * row_bytes, hspans, hweights, target_width, opaque, scratch);
                wi_v4f *swap = reduced; reduced = scratch; scratch = swap;
                reduced_row = y;
            }
            const float weight = vweights[span.offset + k];
            if (k == 0) {
                for (uint32_t x = 0; x < target_width; x++) sum[x] = reduced[x] * weight;
            } else {
                for (uint32_t x = 0; x < target_width; x++) sum[x] += reduced[x] * weight;
            }
        }
        // Back to bytes (and straight alpha); adding a half and truncating rounds non-negative values.
        uint8_t *out = dst + (size_t)ty * target_width * 4;
        for (uint32_t x = 0; x < target_width; x++) {
            wi_v4f v = sum[x];
            if (opaque) {
                v[3] = 255;
            } else if (v[3] <= 0.0001f) {
                v = zero;
            } else {
                float alpha = v[3];
                v *= 1.0f / alpha;
                v[3] = alpha;
            }
            v += half;
            v = __builtin_elementwise_min(__builtin_elementwise_max(v, zero), top);
            wi_v4i i = __builtin_convertvector(v, wi_v4i);
            out[x * 4] = (uint8_t)i[0];
            out[x * 4 + 1] = (uint8_t)i[1];
            out[x * 4 + 2] = (uint8_t)i[2];
            out[x * 4 + 3] = (uint8_t)i[3];
        }
    }
    status = WI_OK;
done:
    free(hspans); free(hweights); free(vspans); free(vweights); free(rows);
    return status;
}

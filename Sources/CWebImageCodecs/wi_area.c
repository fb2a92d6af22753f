// Area-averaging downscale of RGBA8 bitmaps (Bitmap.areaDownscaled, and PNG rows as libpng
// inflates them): each output pixel is the coverage-weighted mean of the source pixels under
// it, in premultiplied alpha unless the bitmap is opaque. Separable, and fed a source row at a
// time: each row is reduced horizontally, once, into a row of float pixels, which the vertical
// pass adds to the sums of the output rows it covers; an output row is written when complete.
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

struct wi_area_stream {
    uint32_t width, height, target_width, target_height;
    int opaque;
    uint8_t *dst;
    wi_span *hspans, *vspans;
    float *hweights, *vweights;
    wi_v4f *rows;             // the three rows below, in one allocation
    wi_v4f *reduced;          // the newest source row, reduced to the target's width
    wi_v4f *sum, *next_sum;   // the output row being summed, and the next when a row feeds both
    uint32_t next;            // the source row expected next
    uint32_t target;          // the output row being summed
};

void wi_area_stream_free(wi_area_stream *s) {
    if (!s) return;
    free(s->hspans); free(s->hweights); free(s->vspans); free(s->vweights); free(s->rows);
    free(s);
}

wi_area_stream *wi_area_stream_create(uint32_t width, uint32_t height, int opaque,
                                      uint8_t *dst, uint32_t target_width, uint32_t target_height) {
    if (!dst || width == 0 || height == 0 || target_width == 0 || target_height == 0 ||
        target_width > width || target_height > height) return NULL;
    wi_area_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->width = width; s->height = height; s->target_width = target_width; s->target_height = target_height;
    s->opaque = opaque; s->dst = dst;
    if (!wi_area_weights(width, target_width, &s->hspans, &s->hweights) ||
        !wi_area_weights(height, target_height, &s->vspans, &s->vweights) ||
        !(s->rows = aligned_alloc(16, sizeof *s->rows * (size_t)target_width * 3))) {
        wi_area_stream_free(s);
        return NULL;
    }
    s->reduced = s->rows;
    s->sum = s->rows + target_width;
    s->next_sum = s->rows + (size_t)target_width * 2;
    return s;
}

/// Output row `ty` from its sum, back to bytes (and straight alpha); adding a half and
/// truncating rounds non-negative values.
static void wi_area_emit(const wi_area_stream *s, const wi_v4f *sum, uint32_t ty) {
    const wi_v4f zero = {0, 0, 0, 0}, top = {255, 255, 255, 255}, half = {0.5f, 0.5f, 0.5f, 0.5f};
    uint8_t *out = s->dst + (size_t)ty * s->target_width * 4;
    for (uint32_t x = 0; x < s->target_width; x++) {
        wi_v4f v = sum[x];
        if (s->opaque) {
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

int wi_area_stream_row(wi_area_stream *s, const uint8_t *row) {
    if (s->next >= s->height) return WI_ERR_ARGUMENT;
    uint32_t y = s->next++;
    if (s->target >= s->target_height) return WI_OK;
    wi_area_reduce_row(row, s->hspans, s->hweights, s->target_width, s->opaque, s->reduced);
    // A source row feeds the output row being summed and, when it straddles the boundary, the
    // next one too (the spans of a downscale overlap by at most a row); an output row is
    // written as soon as its last source row is in.
    wi_area_add(s, s->reduced, y, s->target, s->sum);
    if (s->target + 1 < s->target_height && s->vspans[s->target + 1].start <= y)
        wi_area_add(s, s->reduced, y, s->target + 1, s->next_sum);
    while (s->target < s->target_height) {
        const wi_span span = s->vspans[s->target];
        if (y + 1 < span.start + span.count) break;
        wi_area_emit(s, s->sum, s->target);
        wi_v4f *swap = s->sum; s->sum = s->next_sum; s->next_sum = swap;
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

#include "wi_codecs.h"
#include "wi_internal.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

uint32_t wi_crc32(uint32_t crc, const uint8_t *data, size_t length) {
    return (uint32_t)crc32(crc, data, (uInt)length);
}

int wi_buffer_append(wi_buffer *buffer, const uint8_t *data, size_t length) {
    if (buffer->size + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 4096;
        while (capacity < buffer->size + length) capacity *= 2;
        uint8_t *grown = realloc(buffer->data, capacity);
        if (!grown) return WI_ERR_NO_MEMORY;
        buffer->data = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->data + buffer->size, data, length);
    buffer->size += length;
    return WI_OK;
}

void wi_set_message(char *message, const char *text) {
    wi_say(message, "%s", text ? text : "");
}

void wi_say(char *message, const char *format, ...) {
    if (!message) return;
    va_list args;
    va_start(args, format);
    vsnprintf(message, WI_MESSAGE_SIZE, format, args);
    va_end(args);
}

uint8_t *wi_alloc_bytes(size_t size, int zeroed) {
    if (size == 0) size = 4;
    // No transparent huge pages (MADV_HUGEPAGE) for large buffers: with Debian's default
    // `defrag=madvise` a fault on such a region compacts memory first, and on a machine whose
    // memory has fragmented that stall outweighs the page faults it saves (Benchmarks/README,
    // "Huge pages").
    uint8_t *recycled = wi_pixel_pool_take(size);
    if (recycled) {
        if (zeroed) memset(recycled, 0, size);
        return recycled;
    }
    return zeroed ? calloc(1, size) : malloc(size);
}

uint8_t *wi_alloc_pixels(uint32_t width, uint32_t height, int zeroed) {
    return wi_alloc_bytes((size_t)width * (size_t)height * 4, zeroed);
}

static inline uint8_t div255(uint32_t v) { return (uint8_t)((v + 128 + ((v + 128) >> 8)) >> 8); }

void wi_composite(uint8_t *canvas, uint32_t cw, uint32_t ch, const uint8_t *frame,
                  uint32_t x, uint32_t y, uint32_t w, uint32_t h, int blend_over) {
    if (x >= cw || y >= ch) return;
    uint32_t vw = (x + w > cw) ? cw - x : w;
    uint32_t vh = (y + h > ch) ? ch - y : h;
    for (uint32_t row = 0; row < vh; row++) {
        uint8_t *dst = canvas + ((size_t)(y + row) * cw + x) * 4;
        const uint8_t *src = frame + (size_t)row * w * 4;
        if (!blend_over) { memcpy(dst, src, (size_t)vw * 4); continue; }
        for (uint32_t i = 0; i < vw; i++, dst += 4, src += 4) {
            uint32_t sa = src[3];
            if (sa == 255) { memcpy(dst, src, 4); continue; }
            if (sa == 0) continue;
            uint32_t da = dst[3];
            if (da == 0) { memcpy(dst, src, 4); continue; }
            // out_a = sa + da * (1 - sa); colours weighted by their alpha.
            uint32_t dw = div255(da * (255 - sa));
            uint32_t oa = sa + dw;
            for (int c = 0; c < 3; c++) dst[c] = (uint8_t)((src[c] * sa + dst[c] * dw + oa / 2) / oa);
            dst[3] = (uint8_t)oa;
        }
    }
}

void wi_clear_rect(uint8_t *canvas, uint32_t cw, uint32_t ch, uint32_t x, uint32_t y, uint32_t w, uint32_t h) {
    if (x >= cw || y >= ch) return;
    uint32_t vw = (x + w > cw) ? cw - x : w;
    uint32_t vh = (y + h > ch) ? ch - y : h;
    for (uint32_t row = 0; row < vh; row++) memset(canvas + ((size_t)(y + row) * cw + x) * 4, 0, (size_t)vw * 4);
}

void wi_unpremultiply(uint8_t *rgba, size_t count) {
    for (size_t i = 0; i < count; i++, rgba += 4) {
        uint32_t a = rgba[3];
        if (a == 0) {
            rgba[0] = rgba[1] = rgba[2] = 0;
        } else if (a < 255) {
            for (int c = 0; c < 3; c++) {
                uint32_t v = (rgba[c] * 255u + a / 2) / a;
                rgba[c] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
    }
}

int wi_image_from_argb32(const uint8_t *src, size_t stride, uint32_t width, uint32_t height, wi_image *out) {
    uint8_t *dst = wi_alloc_pixels(width, height, 0);
    if (!dst) { wi_say(out->message, "out of memory"); return WI_ERR_NO_MEMORY; }
    for (uint32_t y = 0; y < height; y++) {
        const uint32_t *row = (const uint32_t *)(const void *)(src + (size_t)y * stride);
        uint8_t *pixel = dst + (size_t)y * width * 4;
        for (uint32_t x = 0; x < width; x++, pixel += 4) {
            uint32_t p = row[x];
            pixel[0] = (uint8_t)(p >> 16); pixel[1] = (uint8_t)(p >> 8); pixel[2] = (uint8_t)p; pixel[3] = (uint8_t)(p >> 24);
        }
    }
    wi_unpremultiply(dst, (size_t)width * height);
    out->pixels = dst;
    out->width = width;
    out->height = height;
    out->rows_decoded = height;
    return WI_OK;
}

void wi_pixels_16_to_8(const uint16_t *src, uint8_t *dst, size_t values) {
    for (size_t i = 0; i < values; i++) dst[i] = (uint8_t)(((uint32_t)src[i] * 255u + 32767u) / 65535u);
}

void wi_pixels_8_to_16(const uint8_t *src, uint16_t *dst, size_t values) {
    for (size_t i = 0; i < values; i++) dst[i] = (uint16_t)(src[i] * 257u);
}

// BMP and the DIBs inside ICO files: the variants browsers show (1, 2, 4, 8 bits through a
// palette, 16 and 32 with default or explicit bit fields, 24, RLE8 and RLE4, bottom-up and
// top-down; OS/2 1.x core headers). Every read is bounds-checked against the input; the size
// is checked against the limit before the one allocation.
#include "include/wi_codecs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t u16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static int fail(char *message, int status, const char *text) {
    snprintf(message, WI_MESSAGE_SIZE, "%s", text);
    return status;
}

// One channel of a bit-field pixel, scaled to 0...255 (truncated, as Pillow's unpackers do).
typedef struct { uint32_t mask, shift, max; } field;

static field make_field(uint32_t mask) {
    field f = { mask, 0, 0 };
    if (!mask) return f;
    while (!((mask >> f.shift) & 1)) f.shift++;
    f.max = mask >> f.shift;
    return f;
}

static int field_is_contiguous(field f) { return f.mask == 0 || (f.max & (f.max + 1)) == 0; }

static uint8_t field_value(field f, uint32_t pixel) {
    if (!f.mask) return 0;
    uint64_t v = (pixel & f.mask) >> f.shift;
    return (uint8_t)(v * 255 / f.max);
}

int wi_bmp_read_info(const uint8_t *data, size_t length, int dib_only, wi_bmp_info *info) {
    memset(info, 0, sizeof *info);
    size_t header = 0;
    if (!dib_only) {
        if (length < 18 || data[0] != 'B' || data[1] != 'M') return fail(info->message, WI_ERR_CORRUPT, "not a BMP file");
        header = 14;
        info->data_offset = u32(data + 10);
    }
    if (length < header + 4) return fail(info->message, WI_ERR_TRUNCATED, "the header is cut short");
    uint32_t size = u32(data + header);
    if (size != 12 && size != 16 && size != 40 && size != 52 && size != 56 && size != 64 && size != 108 && size != 124)
        return fail(info->message, WI_ERR_UNSUPPORTED, "an unknown BMP header size");
    if (length < header + size) return fail(info->message, WI_ERR_TRUNCATED, "the header is cut short");
    const uint8_t *h = data + header;
    int32_t width, height;
    if (size == 12) {
        width = (int32_t)u16(h + 4); height = (int32_t)u16(h + 6);
        info->bits = u16(h + 10);
        info->palette_entry = 3;
    } else {
        width = (int32_t)u32(h + 4); height = (int32_t)u32(h + 8);
        info->bits = u16(h + 14);
        info->compression = size >= 20 ? u32(h + 16) : 0;
        info->colors_used = size >= 36 ? u32(h + 32) : 0;
        info->palette_entry = 4;
        if (size == 64 && (info->compression == 3 || info->compression == 4))
            return fail(info->message, WI_ERR_UNSUPPORTED, "OS/2 Huffman and RLE24 compression are not supported");
    }
    if (width <= 0 || height == 0 || height == INT32_MIN) return fail(info->message, WI_ERR_CORRUPT, "a zero or negative BMP width or height");
    info->top_down = height < 0;
    info->width = (uint32_t)width;
    info->height = (uint32_t)(height < 0 ? -height : height);
    if (dib_only) info->height /= 2;   // an icon's DIB holds the colours and the AND mask
    if (info->height == 0) return fail(info->message, WI_ERR_CORRUPT, "a zero BMP height");
    uint32_t b = info->bits;
    if (b != 1 && b != 2 && b != 4 && b != 8 && b != 16 && b != 24 && b != 32) return fail(info->message, WI_ERR_UNSUPPORTED, "an unsupported BMP bit depth");
    uint32_t c = info->compression;
    if (!(c == 0 || (c == 1 && b == 8) || (c == 2 && b == 4) || ((c == 3 || c == 6) && (b == 16 || b == 32))))
        return fail(info->message, WI_ERR_UNSUPPORTED, "an unsupported BMP compression");
    size_t after = header + size;
    // Bit fields: inside a V2+ header, else right after a 40-byte one.
    info->masks[0] = b == 16 ? 0x7C00 : 0xFF0000;
    info->masks[1] = b == 16 ? 0x03E0 : 0x00FF00;
    info->masks[2] = b == 16 ? 0x001F : 0x0000FF;
    info->masks[3] = 0;
    if (c == 3 || c == 6) {
        size_t count = c == 6 ? 4 : 3;
        const uint8_t *m;
        if (size >= 52) {
            m = h + 40;
            if (size >= 56) count = 4;
        } else {
            if (length < after + count * 4) return fail(info->message, WI_ERR_TRUNCATED, "the bit fields are cut short");
            m = data + after;
            after += count * 4;
        }
        for (size_t i = 0; i < count; i++) info->masks[i] = u32(m + i * 4);
        if (size >= 56 && c == 3 && size != 64) info->masks[3] = u32(h + 52);
    }
    for (int i = 0; i < 4; i++) {
        field f = make_field(info->masks[i]);
        if (!field_is_contiguous(f)) return fail(info->message, WI_ERR_UNSUPPORTED, "non-contiguous BMP bit fields");
    }
    if (b <= 8) {
        uint32_t entries = info->colors_used ? info->colors_used : 1u << b;
        if (entries > 256) return fail(info->message, WI_ERR_CORRUPT, "a BMP palette of over 256 colours");
        info->palette_offset = (uint32_t)after;
        info->palette_size = entries;
        after += (size_t)entries * info->palette_entry;
    }
    if (dib_only) info->data_offset = (uint32_t)after;
    return WI_OK;
}

// RLE8 and RLE4 into palette indices (pixels never written keep index 0).
static int decode_rle(const uint8_t *p, const uint8_t *end, const wi_bmp_info *info, uint8_t *indices) {
    uint32_t w = info->width, h = info->height, x = 0, y = 0;
    int four = info->compression == 2;
    while (p + 2 <= end) {
        uint32_t count = p[0], value = p[1];
        p += 2;
        if (count > 0) {
            for (uint32_t i = 0; i < count; i++, x++) {
                if (x < w && y < h) indices[(size_t)y * w + x] = four ? (uint8_t)(i & 1 ? value & 15 : value >> 4) : (uint8_t)value;
            }
        } else if (value == 0) {
            x = 0; y++;
        } else if (value == 1) {
            return WI_OK;
        } else if (value == 2) {
            if (p + 2 > end) return WI_ERR_TRUNCATED;
            x += p[0]; y += p[1];
            p += 2;
        } else {
            size_t bytes = four ? (value + 1) / 2 : value;
            if ((size_t)(end - p) < bytes) return WI_ERR_TRUNCATED;
            for (uint32_t i = 0; i < value; i++, x++) {
                uint8_t v = four ? (uint8_t)(i & 1 ? p[i / 2] & 15 : p[i / 2] >> 4) : p[i];
                if (x < w && y < h) indices[(size_t)y * w + x] = v;
            }
            p += bytes + (bytes & 1);
        }
        if (y >= h) return WI_OK;
    }
    return WI_ERR_TRUNCATED;
}

int wi_bmp_decode(const uint8_t *data, size_t length, int dib_only, uint64_t max_pixels, wi_image *out) {
    memset(out, 0, sizeof *out);
    wi_bmp_info info;
    int status = wi_bmp_read_info(data, length, dib_only, &info);
    if (status != WI_OK) { memcpy(out->message, info.message, WI_MESSAGE_SIZE); return status; }
    uint32_t w = info.width, h = info.height;
    out->width = w; out->height = h;
    if ((uint64_t)w * h > max_pixels) return fail(out->message, WI_ERR_TOO_LARGE, "image dimensions over the decode limit");
    uint8_t palette[256][4];
    memset(palette, 0, sizeof palette);
    if (info.bits <= 8) {
        size_t needed = (size_t)info.palette_offset + (size_t)info.palette_size * info.palette_entry;
        if (needed > length) return fail(out->message, WI_ERR_TRUNCATED, "the palette is cut short");
        for (uint32_t i = 0; i < info.palette_size; i++) {
            const uint8_t *e = data + info.palette_offset + (size_t)i * info.palette_entry;
            palette[i][0] = e[2]; palette[i][1] = e[1]; palette[i][2] = e[0]; palette[i][3] = 255;
        }
        for (uint32_t i = info.palette_size; i < 256; i++) palette[i][3] = 255;   // out of range: black, as Pillow shows it
    }
    if (info.data_offset >= length) return fail(out->message, WI_ERR_TRUNCATED, "no pixel data");
    const uint8_t *pixels_in = data + info.data_offset;
    size_t available = length - info.data_offset;
    uint64_t stride = (((uint64_t)w * info.bits + 31) / 32) * 4;
    int rle = info.compression == 1 || info.compression == 2;
    if (!rle && stride * h > available) return fail(out->message, WI_ERR_TRUNCATED, "the pixel data is cut short");
    uint8_t *rgba = wi_alloc_pixels(w, h, 0);
    if (!rgba) return fail(out->message, WI_ERR_NO_MEMORY, "out of memory");
    if (rle) {
        uint8_t *indices = calloc((size_t)w * h, 1);
        if (!indices) { free(rgba); return fail(out->message, WI_ERR_NO_MEMORY, "out of memory"); }
        status = decode_rle(pixels_in, pixels_in + available, &info, indices);
        if (status != WI_OK) {
            free(indices); free(rgba);
            return fail(out->message, status, "the RLE data is cut short");
        }
        // RLE rows run bottom-up.
        for (uint32_t y = 0; y < h; y++) {
            const uint8_t *src = indices + (size_t)y * w;
            uint8_t *dst = rgba + (size_t)(info.top_down ? y : h - 1 - y) * w * 4;
            for (uint32_t x = 0; x < w; x++) memcpy(dst + x * 4, palette[src[x]], 4);
        }
        free(indices);
    } else {
        field fields[4];
        for (int i = 0; i < 4; i++) fields[i] = make_field(info.masks[i]);
        for (uint32_t y = 0; y < h; y++) {
            const uint8_t *src = pixels_in + (size_t)y * stride;
            uint8_t *dst = rgba + (size_t)(info.top_down ? y : h - 1 - y) * w * 4;
            for (uint32_t x = 0; x < w; x++, dst += 4) {
                switch (info.bits) {
                case 1: case 2: case 4: case 8: {
                    uint32_t bit = x * info.bits;
                    uint32_t index = (src[bit / 8] >> (8 - info.bits - bit % 8)) & ((1u << info.bits) - 1);
                    memcpy(dst, palette[index], 4);
                    break;
                }
                case 24:
                    dst[0] = src[x * 3 + 2]; dst[1] = src[x * 3 + 1]; dst[2] = src[x * 3]; dst[3] = 255;
                    break;
                default: {
                    uint32_t p = info.bits == 16 ? u16(src + x * 2) : u32(src + x * 4);
                    dst[0] = field_value(fields[0], p); dst[1] = field_value(fields[1], p); dst[2] = field_value(fields[2], p);
                    // An icon's 32-bit DIB keeps its alpha in the fourth byte; a BMP's only with an alpha field.
                    if (dib_only && info.bits == 32 && info.compression == 0) dst[3] = src[x * 4 + 3];
                    else dst[3] = fields[3].mask ? field_value(fields[3], p) : 255;
                }
                }
            }
        }
        if (dib_only && !(info.bits == 32)) {
            // The AND mask after the colours: 1 bit a pixel, 1 = transparent, rows padded to 4 bytes.
            uint64_t mask_stride = (((uint64_t)w + 31) / 32) * 4;
            const uint8_t *mask = pixels_in + stride * h;
            if (mask_stride * h <= available - stride * h) {
                for (uint32_t y = 0; y < h; y++) {
                    const uint8_t *m = mask + (size_t)y * mask_stride;
                    uint8_t *dst = rgba + (size_t)(info.top_down ? y : h - 1 - y) * w * 4;
                    for (uint32_t x = 0; x < w; x++) if ((m[x / 8] >> (7 - x % 8)) & 1) dst[x * 4 + 3] = 0;
                }
            }
        }
    }
    out->pixels = rgba;
    out->rows_decoded = h;
    return WI_OK;
}

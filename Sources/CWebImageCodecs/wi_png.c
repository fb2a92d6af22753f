#include "wi_internal.h"
#include <png.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

struct wi_png_decoder {
    png_structp png;
    png_infop info;
    uint64_t max_pixels;
    uint8_t *pixels;
    uint32_t width, height;
    uint32_t rows;        // highest row + 1 written in the current pass
    int pass, passes, interlaced;
    int done;
    int status;
    int too_large;
    int keep16;           // keep 16-bit samples (wi_png_decoder_keep_16)
    size_t pixel_bytes;   // 4, or 8 when 16-bit samples are kept
    uint32_t reduce_width, reduce_height;   // wi_png_decoder_reduce_to's size, or 0
    wi_area_stream *stream;                 // rows reduced as they come, when it applies
    uint32_t out_width, out_height;         // the pixels' size: the image's, or the reduced one
    char message[WI_MESSAGE_SIZE];
};

static void png_error_fn(png_structp png, png_const_charp text) {
    wi_png_decoder *d = png_get_error_ptr(png);
    if (d) wi_set_message(d->message, text);
    png_longjmp(png, 1);
}

static void png_warning_fn(png_structp png, png_const_charp text) {
    (void)png; (void)text; // ancillary problems (bad CRC on text chunks, ...) are not fatal
}

static void png_info_fn(png_structp png, png_infop info) {
    wi_png_decoder *d = png_get_progressive_ptr(png);
    png_uint_32 w, h;
    int depth, color, interlace;
    png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    if (w == 0 || h == 0) png_error(png, "zero image dimension");
    if ((uint64_t)w * (uint64_t)h > d->max_pixels) {
        d->too_large = 1;
        d->width = w; d->height = h;
        png_error(png, "image dimensions over the decode limit");
    }
    int has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    int deep = depth == 16 && d->keep16;
    d->pixel_bytes = deep ? 8 : 4;
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (has_trns) png_set_tRNS_to_alpha(png);
    if (depth == 16 && !deep) png_set_strip_16(png);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (deep) png_set_swap(png);   // PNG stores 16-bit samples big-endian; the bitmap holds native ones
#endif
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if (!(color & PNG_COLOR_MASK_ALPHA) && !has_trns) png_set_add_alpha(png, deep ? 0xffff : 0xff, PNG_FILLER_AFTER);
    d->passes = png_set_interlace_handling(png);
    d->interlaced = interlace != PNG_INTERLACE_NONE;
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)w * d->pixel_bytes) png_error(png, "unexpected row layout");
    d->width = w; d->height = h;
    d->out_width = w; d->out_height = h;
    // Decoded at size row by row when that gives what a whole decode reduced afterwards would
    // (an opaque 8-bit image read top to bottom once).
    int opaque = !(color & PNG_COLOR_MASK_ALPHA) && !has_trns;
    if (d->reduce_width && d->reduce_height && d->reduce_width <= w && d->reduce_height <= h &&
        (d->reduce_width < w || d->reduce_height < h) && !deep && opaque && interlace == PNG_INTERLACE_NONE) {
        d->pixels = wi_alloc_pixels(d->reduce_width, d->reduce_height, 1);
        if (!d->pixels) { d->status = WI_ERR_NO_MEMORY; png_error(png, "out of memory"); }
        d->stream = wi_area_stream_create(w, h, 1, d->pixels, d->reduce_width, d->reduce_height);
        if (!d->stream) { d->status = WI_ERR_NO_MEMORY; png_error(png, "out of memory"); }
        d->out_width = d->reduce_width; d->out_height = d->reduce_height;
        return;
    }
    d->pixels = deep ? wi_alloc_bytes((size_t)w * h * 8, 1) : wi_alloc_pixels(w, h, 1);
    if (!d->pixels) { d->status = WI_ERR_NO_MEMORY; png_error(png, "out of memory"); }
}

static void png_row_fn(png_structp png, png_bytep row, png_uint_32 row_num, int pass) {
    wi_png_decoder *d = png_get_progressive_ptr(png);
    if (!row || row_num >= d->height) return;
    if (d->stream) {
        // Not interlaced: each row comes once, whole and in order.
        wi_area_stream_row(d->stream, row);
    } else {
        png_progressive_combine_row(png, d->pixels + (size_t)row_num * d->width * d->pixel_bytes, row);
    }
    if (pass != d->pass) { d->pass = pass; d->rows = 0; }
    if (row_num + 1 > d->rows) d->rows = row_num + 1;
}

static void png_end_fn(png_structp png, png_infop info) {
    (void)info;
    wi_png_decoder *d = png_get_progressive_ptr(png);
    d->done = 1;
}

wi_png_decoder *wi_png_decoder_create(uint64_t max_pixels) {
    wi_png_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->max_pixels = max_pixels;
    d->pixel_bytes = 4;
    d->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, png_error_fn, png_warning_fn);
    if (!d->png) { free(d); return NULL; }
    d->info = png_create_info_struct(d->png);
    if (!d->info) { png_destroy_read_struct(&d->png, NULL, NULL); free(d); return NULL; }
    png_set_progressive_read_fn(d->png, d, png_info_fn, png_row_fn, png_end_fn);
    return d;
}

void wi_png_decoder_keep_16(wi_png_decoder *d) { d->keep16 = 1; }

void wi_png_decoder_reduce_to(wi_png_decoder *d, uint32_t width, uint32_t height) {
    d->reduce_width = width;
    d->reduce_height = height;
}

int wi_png_decoder_push(wi_png_decoder *d, const uint8_t *data, size_t length) {
    if (d->status < 0) return d->status;
    if (d->done) return WI_OK;
    if (setjmp(png_jmpbuf(d->png))) {
        if (d->status == 0) d->status = d->too_large ? WI_ERR_TOO_LARGE : WI_ERR_CORRUPT;
        return d->status;
    }
    png_process_data(d->png, d->info, (png_bytep)data, length);
    return d->done ? WI_OK : WI_NEED_MORE;
}

void wi_png_decoder_size(const wi_png_decoder *d, uint32_t *width, uint32_t *height, int *interlaced) {
    *width = d->width; *height = d->height; *interlaced = d->interlaced;
}

int wi_png_decoder_snapshot(const wi_png_decoder *d, wi_image *out) {
    memset(out, 0, sizeof *out);
    if (!d->pixels || d->stream) return WI_NEED_MORE;
    size_t size = (size_t)d->width * d->height * d->pixel_bytes;
    out->pixels = wi_alloc_bytes(size, 0);
    if (!out->pixels) return WI_ERR_NO_MEMORY;
    memcpy(out->pixels, d->pixels, size);
    out->width = d->width; out->height = d->height;
    out->deep = d->pixel_bytes == 8;
    out->rows_decoded = d->done ? d->height : d->rows;
    out->scans = (uint32_t)d->pass + 1;
    return WI_OK;
}

uint64_t wi_png_decoder_progress(const wi_png_decoder *d) {
    return d->pixels ? ((uint64_t)d->pass << 32) | d->rows : 0;
}

int wi_png_decoder_rows_complete(const wi_png_decoder *d) {
    // Every row of the last pass arrived, even if IEND (or the zlib checksum) did not.
    return d->done || (d->pixels && d->pass == d->passes - 1 && d->rows == d->height);
}

int wi_png_decoder_take(wi_png_decoder *d, wi_image *out) {
    memset(out, 0, sizeof *out);
    if (!wi_png_decoder_rows_complete(d) || !d->pixels) return WI_ERR_TRUNCATED;
    out->pixels = d->pixels;
    out->width = d->out_width; out->height = d->out_height;
    out->deep = d->pixel_bytes == 8;
    out->rows_decoded = d->out_height;
    out->scans = (uint32_t)d->passes;
    d->pixels = NULL;
    return WI_OK;
}

const char *wi_png_decoder_message(const wi_png_decoder *d) { return d->message; }

void wi_png_decoder_destroy(wi_png_decoder *d) {
    if (!d) return;
    png_destroy_read_struct(&d->png, &d->info, NULL);
    wi_area_stream_free(d->stream);
    free(d->pixels);
    free(d);
}

// ---- encoding

typedef struct { wi_buffer *out; int failed; } png_write_ctx;

static void png_write_fn(png_structp png, png_bytep data, size_t length) {
    png_write_ctx *ctx = png_get_io_ptr(png);
    if (wi_buffer_append(ctx->out, data, length) != WI_OK) { ctx->failed = 1; png_error(png, "out of memory"); }
}

static void png_flush_fn(png_structp png) { (void)png; }

static void png_write_error_fn(png_structp png, png_const_charp text) {
    wi_buffer *out = png_get_error_ptr(png);
    wi_set_message(out->message, text);
    png_longjmp(png, 1);
}

// Rows without filtering: each row's filter byte (0, none) and its samples as PNG stores them
// (RGB or RGBA; 16-bit samples big-endian), compressed as one zlib stream by libdeflate, which
// does in one call over the whole image what zlib's deflate does a row at a time, with the same
// levels. `*stream` is the caller's to free, on failure too.
static int deflate_unfiltered(const uint8_t *pixels, int deep, uint32_t width, uint32_t height, int keep_alpha,
                              int level, uint8_t **stream, size_t *stream_length) {
    size_t channels = keep_alpha ? 4 : 3, sample = deep ? 2 : 1;
    if ((size_t)width > (SIZE_MAX - 1) / (channels * sample)) return WI_ERR_TOO_LARGE;
    size_t row_bytes = 1 + (size_t)width * channels * sample;
    if (row_bytes > SIZE_MAX / height) return WI_ERR_TOO_LARGE;
    size_t total = row_bytes * height;
    uint8_t *rows = malloc(total), *row = rows;
    if (!rows) return WI_ERR_NO_MEMORY;
    size_t stride = (size_t)width * 4 * sample;
    for (uint32_t y = 0; y < height; y++, row += row_bytes) {
        const uint8_t *in = pixels + (size_t)y * stride;
        uint8_t *out = row + 1;
        row[0] = 0;
        if (!deep && keep_alpha) { memcpy(out, in, stride); continue; }
        if (!deep) {
            for (uint32_t x = 0; x < width; x++, in += 4, out += 3) { out[0] = in[0]; out[1] = in[1]; out[2] = in[2]; }
            continue;
        }
        const uint16_t *words = (const uint16_t *)(const void *)in;
        for (uint32_t x = 0; x < width; x++, words += 4)
            for (size_t c = 0; c < channels; c++) { *out++ = (uint8_t)(words[c] >> 8); *out++ = (uint8_t)words[c]; }
    }
    struct libdeflate_compressor *compressor = libdeflate_alloc_compressor(level < 1 ? 1 : level > 12 ? 12 : level);
    size_t bound = compressor ? libdeflate_zlib_compress_bound(compressor, total) : 0;
    *stream = compressor ? malloc(bound) : NULL;
    *stream_length = *stream ? libdeflate_zlib_compress(compressor, rows, total, *stream, bound) : 0;
    if (compressor) libdeflate_free_compressor(compressor);
    free(rows);
    return *stream_length ? WI_OK : WI_ERR_NO_MEMORY;
}

static int encode(const uint8_t *rgba, int deep, uint32_t width, uint32_t height, int keep_alpha,
                  int level, int adaptive_filters, const uint8_t *icc, size_t icc_length, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    if (width == 0 || height == 0) return WI_ERR_ARGUMENT;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, out, png_write_error_fn, png_warning_fn);
    if (!png) return WI_ERR_NO_MEMORY;
    png_infop info = png_create_info_struct(png);
    png_write_ctx ctx = { out, 0 };
    png_bytep *volatile rows = NULL;
    uint8_t *volatile stream = NULL;
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rows);
        free(stream);
        free(out->data); out->data = NULL; out->size = 0;
        return ctx.failed ? WI_ERR_NO_MEMORY : WI_ERR_CORRUPT;
    }
    png_set_write_fn(png, &ctx, png_write_fn, png_flush_fn);
    png_set_compression_level(png, level);
    png_set_IHDR(png, info, width, height, deep ? 16 : 8, keep_alpha ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (icc && icc_length >= 132 && icc_length <= 0x7fffffff) {
        // A profile libpng finds unfit (not RGB, malformed) is left out with a warning.
        png_set_benign_errors(png, 1);
        png_set_iCCP(png, info, "icc", PNG_COMPRESSION_TYPE_BASE, icc, (png_uint_32)icc_length);
    }
    png_write_info(png, info);
    if (!adaptive_filters) {
        // Without adaptive filtering every row is stored as it is: larger files, written with far
        // less work (libvips's and sharp's default). libdeflate compresses them; the stream goes
        // out as IDAT chunks between libpng's header chunks and its IEND.
        uint8_t *compressed = NULL;
        size_t length = 0;
        int status = deflate_unfiltered(rgba, deep, width, height, keep_alpha, level, &compressed, &length);
        stream = compressed;
        if (status != WI_OK) {
            png_destroy_write_struct(&png, &info);
            free(compressed);
            free(out->data); out->data = NULL; out->size = 0;
            wi_set_message(out->message, status == WI_ERR_NO_MEMORY ? "out of memory" : "the image is too large to write");
            return status;
        }
        for (size_t at = 0; at < length; at += 1 << 20) {
            size_t piece = length - at < ((size_t)1 << 20) ? length - at : (size_t)1 << 20;
            png_write_chunk(png, (png_const_bytep)"IDAT", stream + at, piece);
        }
        png_write_chunk(png, (png_const_bytep)"IEND", NULL, 0);
        png_destroy_write_struct(&png, &info);
        free(stream);
        return WI_OK;
    }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (deep) png_set_swap(png);   // native 16-bit samples, stored big-endian
#endif
    if (!keep_alpha) png_set_filler(png, 0, PNG_FILLER_AFTER);
    rows = malloc(sizeof(png_bytep) * height);
    if (!rows) { ctx.failed = 1; png_error(png, "out of memory"); }
    for (uint32_t y = 0; y < height; y++) rows[y] = (png_bytep)(rgba + (size_t)y * width * (deep ? 8 : 4));
    png_write_image(png, rows);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(rows);
    return WI_OK;
}

int wi_png_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int keep_alpha,
                  int level, int adaptive_filters, const uint8_t *icc, size_t icc_length, wi_buffer *out) {
    return encode(rgba, 0, width, height, keep_alpha, level, adaptive_filters, icc, icc_length, out);
}

int wi_png_encode_16(const uint16_t *rgba, uint32_t width, uint32_t height, int keep_alpha,
                     int level, int adaptive_filters, const uint8_t *icc, size_t icc_length, wi_buffer *out) {
    return encode((const uint8_t *)rgba, 1, width, height, keep_alpha, level, adaptive_filters, icc, icc_length, out);
}

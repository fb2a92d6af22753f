// Writing a one-page TIFF into memory with libtiff (RGB or RGBA, 8 or 16 bits, Deflate).
#include "wi_tiff_internal.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The file being written, in memory: libtiff writes, seeks back (to the directory offsets)
// and reads what it wrote.
typedef struct {
    wi_buffer *buffer;
    size_t offset;
    int failed;
} memory_output;

static tmsize_t out_write(thandle_t h, void *bytes, tmsize_t size) {
    memory_output *m = h;
    if (size < 0) return -1;
    size_t end = m->offset + (size_t)size;
    if (end > m->buffer->capacity) {
        size_t capacity = m->buffer->capacity ? m->buffer->capacity : 65536;
        while (capacity < end) capacity *= 2;
        uint8_t *grown = realloc(m->buffer->data, capacity);
        if (!grown) { m->failed = 1; return -1; }
        m->buffer->data = grown;
        m->buffer->capacity = capacity;
    }
    if (m->offset > m->buffer->size) memset(m->buffer->data + m->buffer->size, 0, m->offset - m->buffer->size);
    memcpy(m->buffer->data + m->offset, bytes, (size_t)size);
    m->offset = end;
    if (end > m->buffer->size) m->buffer->size = end;
    return size;
}
static tmsize_t out_read(thandle_t h, void *bytes, tmsize_t size) {
    memory_output *m = h;
    if (size <= 0 || m->offset >= m->buffer->size) return 0;
    size_t n = (size_t)size < m->buffer->size - m->offset ? (size_t)size : m->buffer->size - m->offset;
    memcpy(bytes, m->buffer->data + m->offset, n);
    m->offset += n;
    return (tmsize_t)n;
}
static toff_t out_seek(thandle_t h, toff_t offset, int whence) {
    memory_output *m = h;
    uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->offset : m->buffer->size;
    if (offset > UINT64_MAX - base || base + offset > (uint64_t)SIZE_MAX / 2) return (toff_t)-1;
    m->offset = (size_t)(base + offset);
    return (toff_t)m->offset;
}
static toff_t out_size(thandle_t h) { return ((memory_output *)h)->buffer->size; }
static int out_map(thandle_t h, void **base, toff_t *size) { (void)h; (void)base; (void)size; return 0; }

int wi_tiff_encode(const void *rgba, uint32_t width, uint32_t height, int deep, int has_alpha,
                   const uint8_t *icc, size_t icc_length, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    memory_output file = { out, 0, 0 };
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (!options) return WI_ERR_NO_MEMORY;
    TIFFOpenOptionsSetErrorHandlerExtR(options, wi_tiff_on_error, out->message);
    TIFFOpenOptionsSetWarningHandlerExtR(options, wi_tiff_on_warning, NULL);
    TIFF *tif = TIFFClientOpenExt("memory", "w", &file, out_read, out_write, out_seek, wi_tiff_no_close, out_size, out_map, wi_tiff_no_unmap, options);
    TIFFOpenOptionsFree(options);
    if (!tif) {
        free(out->data);
        memset(out, 0, offsetof(wi_buffer, message));
        return WI_ERR_NO_MEMORY;
    }
    uint16_t samples = has_alpha ? 4 : 3, bits = deep ? 16 : 8;
    int ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, width) && TIFFSetField(tif, TIFFTAG_IMAGELENGTH, height)
        && TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bits) && TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, samples)
        && TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB) && TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG)
        && TIFFSetField(tif, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT)
        // Deflate with the horizontal predictor: lossless, and what libvips and Pillow write
        // when asked for a compressed TIFF.
        && TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE) && TIFFSetField(tif, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL)
        && TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif, 0));
    if (ok && has_alpha) {
        uint16_t extra = EXTRASAMPLE_UNASSALPHA;
        ok = TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    if (ok && icc && icc_length) ok = TIFFSetField(tif, TIFFTAG_ICCPROFILE, (uint32_t)icc_length, icc);
    size_t pixel = deep ? 8 : 4, sample = deep ? 2 : 1;
    uint8_t *row = ok ? malloc((size_t)width * samples * sample) : NULL;
    if (ok && !row) ok = 0;
    for (uint32_t y = 0; ok && y < height; y++) {
        const uint8_t *src = (const uint8_t *)rgba + (size_t)y * width * pixel;
        if (has_alpha) {
            memcpy(row, src, (size_t)width * pixel);
        } else {
            for (uint32_t x = 0; x < width; x++) memcpy(row + (size_t)x * 3 * sample, src + (size_t)x * pixel, 3 * sample);
        }
        ok = TIFFWriteScanline(tif, row, y, 0) == 1;
    }
    free(row);
    if (ok) ok = TIFFWriteDirectory(tif);
    TIFFClose(tif);
    if (!ok || file.failed) {
        if (!out->message[0]) snprintf(out->message, WI_MESSAGE_SIZE, file.failed ? "out of memory" : "libtiff refused the image");
        free(out->data);
        out->data = NULL;
        out->size = out->capacity = 0;
        return file.failed ? WI_ERR_NO_MEMORY : WI_ERR_ARGUMENT;
    }
    return WI_OK;
}

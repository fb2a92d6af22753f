#include "wi_tiff.h"
#include <tiffio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The file in memory, read through libtiff's client procedures.
typedef struct {
    const uint8_t *data;
    size_t length, offset;
    char *message;
} memory_file;

static tmsize_t mem_read(thandle_t h, void *buffer, tmsize_t size) {
    memory_file *m = h;
    if (size <= 0 || m->offset >= m->length) return 0;
    size_t n = (size_t)size < m->length - m->offset ? (size_t)size : m->length - m->offset;
    memcpy(buffer, m->data + m->offset, n);
    m->offset += n;
    return (tmsize_t)n;
}
static tmsize_t mem_write(thandle_t h, void *buffer, tmsize_t size) { (void)h; (void)buffer; (void)size; return -1; }
static toff_t mem_seek(thandle_t h, toff_t offset, int whence) {
    memory_file *m = h;
    uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->offset : m->length;
    if (offset > UINT64_MAX - base) return (toff_t)-1;
    m->offset = (size_t)(base + offset);
    return (toff_t)m->offset;
}
static int mem_close(thandle_t h) { (void)h; return 0; }
static toff_t mem_size(thandle_t h) { return ((memory_file *)h)->length; }
static int mem_map(thandle_t h, void **base, toff_t *size) {
    memory_file *m = h;
    *base = (void *)m->data; *size = m->length;
    return 1;
}
static void mem_unmap(thandle_t h, void *base, toff_t size) { (void)h; (void)base; (void)size; }

static int on_error(TIFF *tif, void *user, const char *module, const char *format, va_list args) {
    (void)tif; (void)module;
    char *message = user;
    if (message && !message[0]) vsnprintf(message, WI_MESSAGE_SIZE, format, args);
    return 1;
}
static int on_warning(TIFF *tif, void *user, const char *module, const char *format, va_list args) {
    (void)tif; (void)user; (void)module; (void)format; (void)args;
    return 1;
}

// A page read sample by sample rather than through libtiff's RGBA interface (which goes through
// 8-bit premultiplied colours): unsigned samples of 8 bits (or 16, when the caller keeps them),
// contiguous, in strips: RGB, RGBA, grey or grey and alpha. The bits, else 0. Other layouts
// (tiled, planar, palette, CMYK, YCbCr, LAB, 16 bits in 8) go through the RGBA interface.
static int direct_layout(TIFF *tif, int deep) {
    uint16_t bits = 0, samples = 0, photometric = 0, planar = PLANARCONFIG_CONTIG, format = SAMPLEFORMAT_UINT;
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)) return 0;
    if (!(bits == 8 || (bits == 16 && deep)) || planar != PLANARCONFIG_CONTIG || format != SAMPLEFORMAT_UINT || TIFFIsTiled(tif)) return 0;
    // An extra sample without its ExtraSamples tag is the RGBA interface's to guess about.
    uint16_t extra_count = 0, *extra = NULL;
    int described = TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra) && extra_count == 1;
    if (photometric == PHOTOMETRIC_RGB) return samples == 3 || (samples == 4 && described) ? bits : 0;
    if (photometric == PHOTOMETRIC_MINISBLACK) return samples == 1 || (samples == 2 && described) ? bits : 0;
    return 0;
}

// Reads such a page row by row into RGBA8, or RGBA16 for 16 bits (native-endian, as libtiff
// gives samples); an associated (premultiplied) alpha is divided out.
static int read_direct(TIFF *tif, uint32_t w, uint32_t h, int bits, char message[WI_MESSAGE_SIZE], uint8_t **result) {
    uint16_t samples = 0, photometric = 0, extra_count = 0, *extra = NULL;
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
    TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric);
    TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
    // The extra sample (described: direct_layout) is alpha unless it is unspecified.
    int grey = photometric == PHOTOMETRIC_MINISBLACK, extra_sample = samples == (grey ? 2 : 4);
    int associated = extra_sample && extra_count >= 1 && extra && extra[0] == EXTRASAMPLE_ASSOCALPHA;
    int has_alpha = extra_sample && !(extra_count >= 1 && extra && extra[0] == EXTRASAMPLE_UNSPECIFIED);
    size_t sample = bits / 8;
    uint32_t top = bits == 16 ? 65535 : 255;
    tmsize_t row_size = TIFFScanlineSize(tif);
    if (row_size < (tmsize_t)((size_t)w * samples * sample)) {
        snprintf(message, WI_MESSAGE_SIZE, "a TIFF row shorter than its width");
        return WI_ERR_CORRUPT;
    }
    uint8_t *row = _TIFFmalloc(row_size);
    uint8_t *pixels = bits == 16 ? wi_alloc_bytes((size_t)w * h * 8, 0) : wi_alloc_pixels(w, h, 0);
    if (!row || !pixels) {
        if (row) _TIFFfree(row);
        free(pixels);
        return WI_ERR_NO_MEMORY;
    }
    for (uint32_t y = 0; y < h; y++) {
        if (TIFFReadScanline(tif, row, y, 0) < 0) {
            if (!message[0]) snprintf(message, WI_MESSAGE_SIZE, "the TIFF data is corrupt or cut short");
            _TIFFfree(row);
            free(pixels);
            return WI_ERR_CORRUPT;
        }
        for (uint32_t x = 0; x < w; x++) {
            uint32_t v[4];
            for (uint16_t c = 0; c < samples; c++)
                v[c] = bits == 16 ? ((const uint16_t *)row)[(size_t)x * samples + c] : row[(size_t)x * samples + c];
            uint32_t a = has_alpha ? v[samples - 1] : top;   // the extra sample is the last
            uint32_t rgb[3] = { v[0], grey ? v[0] : v[1], grey ? v[0] : v[2] };
            for (int c = 0; c < 3; c++) {
                if (associated) rgb[c] = a ? (rgb[c] * top + a / 2) / a : 0;
                if (rgb[c] > top) rgb[c] = top;
            }
            size_t at = ((size_t)y * w + x) * 4;
            if (bits == 16) {
                uint16_t *dst = (uint16_t *)pixels + at;
                dst[0] = (uint16_t)rgb[0]; dst[1] = (uint16_t)rgb[1]; dst[2] = (uint16_t)rgb[2]; dst[3] = (uint16_t)a;
            } else {
                uint8_t *dst = pixels + at;
                dst[0] = (uint8_t)rgb[0]; dst[1] = (uint8_t)rgb[1]; dst[2] = (uint8_t)rgb[2]; dst[3] = (uint8_t)a;
            }
        }
    }
    _TIFFfree(row);
    *result = pixels;
    return WI_OK;
}

int wi_tiff_decode(const uint8_t *data, size_t length, uint64_t max_pixels, wi_tiff_info *info, wi_image *out) {
    return wi_tiff_decode_at(data, length, max_pixels, 0, info, out);
}

int wi_tiff_decode_at(const uint8_t *data, size_t length, uint64_t max_pixels, int deep, wi_tiff_info *info, wi_image *out) {
    memset(info, 0, sizeof *info);
    memset(out, 0, sizeof *out);
    memory_file file = { data, length, 0, info->message };
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (!options) return WI_ERR_NO_MEMORY;
    TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, info->message);
    TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, NULL);
    // No single allocation of libtiff's (a strip, a tile, a table) over the page's own size
    // plus room: a header that lies about a strip cannot make it allocate gigabytes.
    uint64_t cap = max_pixels * 8 + (64u << 20);
    TIFFOpenOptionsSetMaxSingleMemAlloc(options, (tmsize_t)(cap > (uint64_t)INT64_MAX / 2 ? INT64_MAX / 2 : cap));
    TIFF *tif = TIFFClientOpenExt("memory", "r", &file, mem_read, mem_write, mem_seek, mem_close, mem_size, mem_map, mem_unmap, options);
    TIFFOpenOptionsFree(options);
    if (!tif) {
        if (!info->message[0]) snprintf(info->message, WI_MESSAGE_SIZE, "not a readable TIFF file");
        return WI_ERR_CORRUPT;
    }
    int status = WI_OK;
    uint32_t w = 0, h = 0;
    uint16_t orientation = ORIENTATION_TOPLEFT;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
    TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &orientation);
    info->width = w; info->height = h;
    info->orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
    info->pages = TIFFNumberOfDirectories(tif);
    uint32_t icc_length = 0;
    void *icc = NULL;
    if (TIFFGetField(tif, TIFFTAG_ICCPROFILE, &icc_length, &icc) && icc && icc_length >= 132 && icc_length <= (4u << 20)
        && (info->icc = malloc(icc_length))) {
        memcpy(info->icc, icc, icc_length);
        info->icc_length = icc_length;
    }
    out->width = w; out->height = h;
    if (w == 0 || h == 0) {
        snprintf(info->message, WI_MESSAGE_SIZE, "a zero TIFF width or height");
        status = WI_ERR_CORRUPT;
    } else if ((uint64_t)w * h > max_pixels) {
        snprintf(info->message, WI_MESSAGE_SIZE, "image dimensions over the decode limit");
        status = WI_ERR_TOO_LARGE;
    }
    if (status == WI_OK && TIFFIsTiled(tif)) {
        // libtiff allocates a whole tile (and its RGBA copy) to read any of it: a tile is no
        // larger than the pixel limit, nor than its page (a page smaller than 512x512 may have
        // tiles up to that, as writers give small pages one ordinary tile).
        uint32_t tile_width = 0, tile_height = 0;
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tile_width);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &tile_height);
        uint64_t tile = (uint64_t)tile_width * tile_height, page = (uint64_t)w * h;
        if (tile > max_pixels || tile > (page > (512u * 512u) ? page : 512u * 512u)) {
            snprintf(info->message, WI_MESSAGE_SIZE, "a %ux%u tile for a %ux%u image", tile_width, tile_height, w, h);
            status = WI_ERR_CORRUPT;
        }
    }
    uint8_t *pixels = NULL;
    int direct = status == WI_OK ? direct_layout(tif, deep) : 0;
    if (direct) {
        status = read_direct(tif, w, h, direct, info->message, &pixels);
        TIFFClose(tif);
        if (status != WI_OK) {
            free(info->icc);
            info->icc = NULL;
            info->icc_length = 0;
            memcpy(out->message, info->message, WI_MESSAGE_SIZE);
            return status;
        }
        out->pixels = pixels;
        out->rows_decoded = h;
        out->deep = direct == 16;
        return WI_OK;
    }
    TIFFRGBAImage image;
    char reason[1024] = "";
    if (status == WI_OK && !TIFFRGBAImageOK(tif, reason)) {
        snprintf(info->message, WI_MESSAGE_SIZE, "%s", reason);
        status = WI_ERR_UNSUPPORTED;
    }
    if (status == WI_OK && !TIFFRGBAImageBegin(&image, tif, 1, reason)) {   // stop at the first error: no half image
        snprintf(info->message, WI_MESSAGE_SIZE, "%s", reason);
        status = WI_ERR_CORRUPT;
    }
    if (status == WI_OK) {
        // The rows as stored: the orientation is the caller's to apply, as EXIF's is.
        image.req_orientation = image.orientation;
        pixels = wi_alloc_pixels(w, h, 1);
        if (!pixels) {
            status = WI_ERR_NO_MEMORY;
        } else if (!TIFFRGBAImageGet(&image, (uint32_t *)pixels, w, h)) {
            if (!info->message[0]) snprintf(info->message, WI_MESSAGE_SIZE, "the TIFF data is corrupt or cut short");
            status = WI_ERR_CORRUPT;
        }
        int premultiplied = image.alpha != 0;
        TIFFRGBAImageEnd(&image);
        if (status == WI_OK) {
            // libtiff packs A<<24|B<<16|G<<8|R: R, G, B, A bytes in memory on a little-endian
            // machine; colours come premultiplied whenever there is alpha.
            for (size_t i = 0, n = (size_t)w * h; i < n; i++) {
                uint32_t p = ((uint32_t *)pixels)[i];
                uint8_t *d = pixels + i * 4;
                d[0] = (uint8_t)p; d[1] = (uint8_t)(p >> 8); d[2] = (uint8_t)(p >> 16); d[3] = (uint8_t)(p >> 24);
            }
            if (premultiplied) wi_unpremultiply(pixels, (size_t)w * h);
        }
    }
    TIFFClose(tif);
    if (status != WI_OK) {
        free(pixels);
        free(info->icc);
        info->icc = NULL;
        info->icc_length = 0;
        memcpy(out->message, info->message, WI_MESSAGE_SIZE);
        return status;
    }
    out->pixels = pixels;
    out->rows_decoded = h;
    return WI_OK;
}

// ---- Encoding

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
    TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, out->message);
    TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, NULL);
    TIFF *tif = TIFFClientOpenExt("memory", "w", &file, out_read, out_write, out_seek, mem_close, out_size, out_map, mem_unmap, options);
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

// Reading TIFF with libtiff from memory: the page's facts, then its pixels sample by sample
// (wi_tiff_samples.c) or through libtiff's RGBA interface. Writing is wi_tiff_encode.c.
#include "wi_tiff_internal.h"
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
int wi_tiff_no_close(thandle_t h) { (void)h; return 0; }
static toff_t mem_size(thandle_t h) { return ((memory_file *)h)->length; }
static int mem_map(thandle_t h, void **base, toff_t *size) {
    memory_file *m = h;
    *base = (void *)m->data; *size = m->length;
    return 1;
}
void wi_tiff_no_unmap(thandle_t h, void *base, toff_t size) { (void)h; (void)base; (void)size; }

int wi_tiff_on_error(TIFF *tif, void *user, const char *module, const char *format, va_list args) {
    (void)tif; (void)module;
    char *message = user;
    if (message && !message[0]) vsnprintf(message, WI_MESSAGE_SIZE, format, args);
    return 1;
}
int wi_tiff_on_warning(TIFF *tif, void *user, const char *module, const char *format, va_list args) {
    (void)tif; (void)user; (void)module; (void)format; (void)args;
    return 1;
}

// Reads any other page through libtiff's RGBA interface into RGBA8, alpha un-premultiplied.
static int read_rgba(TIFF *tif, uint32_t w, uint32_t h, char message[WI_MESSAGE_SIZE], uint8_t **result) {
    TIFFRGBAImage image;
    char reason[1024] = "";
    if (!TIFFRGBAImageOK(tif, reason)) {
        snprintf(message, WI_MESSAGE_SIZE, "%s", reason);
        return WI_ERR_UNSUPPORTED;
    }
    if (!TIFFRGBAImageBegin(&image, tif, 1, reason)) {   // stop at the first error: no half image
        snprintf(message, WI_MESSAGE_SIZE, "%s", reason);
        return WI_ERR_CORRUPT;
    }
    // The rows as stored: the orientation is the caller's to apply, as EXIF's is.
    image.req_orientation = image.orientation;
    int status = WI_OK;
    uint8_t *pixels = wi_alloc_pixels(w, h, 1);
    if (!pixels) {
        status = WI_ERR_NO_MEMORY;
    } else if (!TIFFRGBAImageGet(&image, (uint32_t *)pixels, w, h)) {
        if (!message[0]) snprintf(message, WI_MESSAGE_SIZE, "the TIFF data is corrupt or cut short");
        status = WI_ERR_CORRUPT;
    }
    int premultiplied = image.alpha != 0;
    TIFFRGBAImageEnd(&image);
    if (status != WI_OK) {
        free(pixels);
        return status;
    }
    // libtiff packs A<<24|B<<16|G<<8|R: R, G, B, A bytes in memory on a little-endian machine;
    // colours come premultiplied whenever there is alpha.
    for (size_t i = 0, n = (size_t)w * h; i < n; i++) {
        uint32_t p = ((uint32_t *)pixels)[i];
        uint8_t *d = pixels + i * 4;
        d[0] = (uint8_t)p; d[1] = (uint8_t)(p >> 8); d[2] = (uint8_t)(p >> 16); d[3] = (uint8_t)(p >> 24);
    }
    if (premultiplied) wi_unpremultiply(pixels, (size_t)w * h);
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
    TIFFOpenOptionsSetErrorHandlerExtR(options, wi_tiff_on_error, info->message);
    TIFFOpenOptionsSetWarningHandlerExtR(options, wi_tiff_on_warning, NULL);
    // No single allocation of libtiff's (a strip, a tile, a table) over the page's own size
    // plus room: a header that lies about a strip cannot make it allocate gigabytes.
    uint64_t cap = max_pixels * 8 + (64u << 20);
    TIFFOpenOptionsSetMaxSingleMemAlloc(options, (tmsize_t)(cap > (uint64_t)INT64_MAX / 2 ? INT64_MAX / 2 : cap));
    TIFF *tif = TIFFClientOpenExt("memory", "r", &file, mem_read, mem_write, mem_seek, wi_tiff_no_close, mem_size, mem_map, wi_tiff_no_unmap, options);
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
    int direct = status == WI_OK ? wi_tiff_direct_layout(tif, deep) : 0;
    if (direct) status = wi_tiff_read_direct(tif, w, h, direct, info->message, &pixels);
    else if (status == WI_OK) status = read_rgba(tif, w, h, info->message, &pixels);
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
    out->deep = direct == 16;
    return WI_OK;
}

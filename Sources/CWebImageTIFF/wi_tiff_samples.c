// A TIFF page read sample by sample rather than through libtiff's RGBA interface (which goes
// through 8-bit premultiplied colours): unsigned samples of 8 bits (or 16, kept when asked),
// RGB, RGBA, grey or grey and alpha, in strips or tiles, contiguous or in planes. Rows come out
// interleaved whatever the layout (a band of tiles is read once for all its rows), then become
// RGBA8 or RGBA16; a band of strips in planes likewise, so that no strip is decoded twice.
// Other pages (palette, CMYK, YCbCr, LAB, bilevel, 16 bits in 8) go through
// the RGBA interface.
#include "wi_tiff_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wi_tiff_direct_layout(TIFF *tif, int deep) {
    uint16_t bits = 0, samples = 0, photometric = 0, planar = PLANARCONFIG_CONTIG, format = SAMPLEFORMAT_UINT;
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)) return 0;
    if (!(bits == 8 || (bits == 16 && deep)) || format != SAMPLEFORMAT_UINT) return 0;
    if (planar != PLANARCONFIG_CONTIG && planar != PLANARCONFIG_SEPARATE) return 0;
    // An extra sample without its ExtraSamples tag is the RGBA interface's to guess about.
    uint16_t extra_count = 0, *extra = NULL;
    int described = TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra) && extra_count == 1;
    if (photometric == PHOTOMETRIC_RGB) return samples == 3 || (samples == 4 && described) ? bits : 0;
    if (photometric == PHOTOMETRIC_MINISBLACK) return samples == 1 || (samples == 2 && described) ? bits : 0;
    return 0;
}

// Rows of interleaved samples from any of the layouts.
typedef struct {
    TIFF *tif;
    uint32_t width, height;
    uint16_t samples;
    size_t sample;                // bytes a sample
    int tiled, planes;            // planes: PLANARCONFIG_SEPARATE
    int banded;                   // read in bands: tiles, or strips in planes
    uint32_t tile_width, tile_height;  // a tile, or a strip (the width, its rows)
    uint8_t *scratch;             // a tile or a plane's strip
    uint8_t *band;                // a band of tile_height interleaved rows
    uint32_t band_top;            // the band's first row (UINT32_MAX before the first)
} row_reader;

// Copies `count` samples of one plane (`from`, packed) into interleaved samples at `to`.
static void scatter(uint8_t *to, const uint8_t *from, size_t count, uint16_t plane, uint16_t samples, size_t sample) {
    for (size_t i = 0; i < count; i++) memcpy(to + (i * samples + plane) * sample, from + i * sample, sample);
}

// Reads the band of tiles (or of strips in planes) holding row `y`.
static int read_band(row_reader *r, uint32_t y) {
    uint32_t top = y - y % r->tile_height, rows = r->height - top < r->tile_height ? r->height - top : r->tile_height;
    size_t row_bytes = (size_t)r->width * r->samples * r->sample;
    for (uint32_t x = 0; x < r->width; x += r->tile_width) {
        uint32_t columns = r->width - x < r->tile_width ? r->width - x : r->tile_width;
        for (uint16_t plane = 0; plane < (r->planes ? r->samples : 1); plane++) {
            tmsize_t got = r->tiled ? TIFFReadTile(r->tif, r->scratch, x, top, 0, plane)
                                    : TIFFReadEncodedStrip(r->tif, TIFFComputeStrip(r->tif, top, plane), r->scratch, -1);
            // A strip of the last band may hold fewer rows; it must hold those of this band.
            if (got < 0 || (!r->tiled && (size_t)got < (size_t)rows * r->width * r->sample)) return 0;
            for (uint32_t row = 0; row < rows; row++) {
                uint8_t *to = r->band + row * row_bytes + (size_t)x * r->samples * r->sample;
                if (r->planes) {
                    scatter(to, r->scratch + (size_t)row * r->tile_width * r->sample, columns, plane, r->samples, r->sample);
                } else {
                    memcpy(to, r->scratch + (size_t)row * r->tile_width * r->samples * r->sample, (size_t)columns * r->samples * r->sample);
                }
            }
        }
    }
    r->band_top = top;
    return 1;
}

// Row `y` into `row` (width x samples, interleaved); 0 when libtiff cannot read it.
static int read_row(row_reader *r, uint32_t y, uint8_t *row) {
    size_t row_bytes = (size_t)r->width * r->samples * r->sample;
    if (!r->banded) return TIFFReadScanline(r->tif, row, y, 0) >= 0;
    if (r->band_top == UINT32_MAX || y < r->band_top || y >= r->band_top + r->tile_height) {
        if (!read_band(r, y)) return 0;
    }
    memcpy(row, r->band + (size_t)(y - r->band_top) * row_bytes, row_bytes);
    return 1;
}

static void close_reader(row_reader *r) {
    if (r->scratch) _TIFFfree(r->scratch);
    free(r->band);
}

// A reader for the page, its buffers sized by what libtiff says a row or a tile holds (no
// smaller than the samples copied out of it).
static int open_reader(row_reader *r, TIFF *tif, uint32_t w, uint32_t h, int bits, char message[WI_MESSAGE_SIZE]) {
    uint16_t planar = PLANARCONFIG_CONTIG;
    memset(r, 0, sizeof *r);
    r->tif = tif; r->width = w; r->height = h; r->sample = (size_t)bits / 8; r->band_top = UINT32_MAX;
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &r->samples);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    r->planes = planar == PLANARCONFIG_SEPARATE;
    r->tiled = TIFFIsTiled(tif);
    r->banded = r->tiled || r->planes;
    size_t per_pixel = r->planes ? r->sample : r->samples * r->sample;
    tmsize_t size;
    size_t needed;
    if (r->tiled) {
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &r->tile_width);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &r->tile_height);
        size = TIFFTileSize(tif);
        needed = (size_t)r->tile_width * r->tile_height * per_pixel;
    } else if (r->planes) {
        uint32_t strip_rows = h;
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &strip_rows);
        r->tile_width = w;
        r->tile_height = strip_rows < h ? strip_rows : h;
        size = TIFFStripSize(tif);
        needed = (size_t)w * r->tile_height * per_pixel;
    } else {
        size = TIFFScanlineSize(tif);
        needed = (size_t)w * per_pixel;
    }
    if ((r->banded && (r->tile_width == 0 || r->tile_height == 0)) || size <= 0 || (size_t)size < needed) {
        snprintf(message, WI_MESSAGE_SIZE, "a TIFF %s smaller than its samples", r->tiled ? "tile" : r->planes ? "strip" : "row");
        return WI_ERR_CORRUPT;
    }
    if (r->banded && !(r->scratch = _TIFFmalloc(size))) return WI_ERR_NO_MEMORY;
    if (r->banded && !(r->band = malloc((size_t)w * r->samples * r->sample * r->tile_height))) {
        close_reader(r);
        return WI_ERR_NO_MEMORY;
    }
    return WI_OK;
}

int wi_tiff_read_direct(TIFF *tif, uint32_t w, uint32_t h, int bits, char message[WI_MESSAGE_SIZE], uint8_t **result) {
    uint16_t photometric = 0, extra_count = 0, *extra = NULL;
    row_reader reader;
    int status = open_reader(&reader, tif, w, h, bits, message);
    if (status != WI_OK) return status;
    uint16_t samples = reader.samples;
    TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric);
    TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
    // The extra sample (described: wi_tiff_direct_layout) is alpha unless it is unspecified.
    int grey = photometric == PHOTOMETRIC_MINISBLACK, extra_sample = samples == (grey ? 2 : 4);
    int associated = extra_sample && extra_count >= 1 && extra && extra[0] == EXTRASAMPLE_ASSOCALPHA;
    int has_alpha = extra_sample && !(extra_count >= 1 && extra && extra[0] == EXTRASAMPLE_UNSPECIFIED);
    uint32_t top = bits == 16 ? 65535 : 255;
    uint8_t *row = malloc((size_t)w * samples * reader.sample);
    uint8_t *pixels = bits == 16 ? wi_alloc_bytes((size_t)w * h * 8, 0) : wi_alloc_pixels(w, h, 0);
    if (!row || !pixels) {
        free(row);
        free(pixels);
        close_reader(&reader);
        return WI_ERR_NO_MEMORY;
    }
    for (uint32_t y = 0; y < h && status == WI_OK; y++) {
        if (!read_row(&reader, y, row)) {
            if (!message[0]) snprintf(message, WI_MESSAGE_SIZE, "the TIFF data is corrupt or cut short");
            status = WI_ERR_CORRUPT;
            break;
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
    free(row);
    close_reader(&reader);
    if (status != WI_OK) {
        free(pixels);
        return status;
    }
    *result = pixels;
    return WI_OK;
}

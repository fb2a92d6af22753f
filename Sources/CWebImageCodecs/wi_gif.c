#include "wi_internal.h"
#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t left, top, width, height;
    uint8_t *indices;        // width * height palette indices, rows top to bottom
    uint8_t palette[256 * 3];
    int palette_size;        // 0: use the global palette
    int transparent;         // -1: none
    int disposal;
    uint32_t delay_cs;
} gif_frame;

struct wi_gif {
    uint32_t width, height;
    gif_frame *frames;
    uint32_t count, capacity;
    uint8_t palette[256 * 3];
    int palette_size;
    int loop_count;
    uint8_t *canvas, *saved;  // compositing state
    uint32_t next;            // next frame to draw onto canvas
};

typedef struct { const uint8_t *data; size_t length, offset; } gif_reader;

static int gif_read_fn(GifFileType *gif, GifByteType *buffer, int length) {
    gif_reader *r = gif->UserData;
    size_t left = r->length - r->offset;
    size_t n = (size_t)length < left ? (size_t)length : left;
    memcpy(buffer, r->data + r->offset, n);
    r->offset += n;
    return (int)n;
}

static void copy_palette(const ColorMapObject *map, uint8_t *palette, int *size) {
    *size = 0;
    if (!map || !map->Colors) return;
    int n = map->ColorCount > 256 ? 256 : map->ColorCount;
    for (int i = 0; i < n; i++) {
        palette[i * 3] = map->Colors[i].Red;
        palette[i * 3 + 1] = map->Colors[i].Green;
        palette[i * 3 + 2] = map->Colors[i].Blue;
    }
    *size = n;
}

static int skip_image_data(GifFileType *gif) {
    int code_size; GifByteType *block;
    if (DGifGetCode(gif, &code_size, &block) == GIF_ERROR) return 0;
    while (block) if (DGifGetCodeNext(gif, &block) == GIF_ERROR) return 0;
    return 1;
}

// Reads the raster of the image whose descriptor was just read into frame f.
static int read_raster(GifFileType *gif, gif_frame *f, int interlaced) {
    if (!interlaced) {
        // One call for the whole frame (rows are contiguous), as DGifSlurp reads it.
        if ((uint64_t)f->width * f->height <= INT32_MAX)
            return DGifGetLine(gif, f->indices, (int)(f->width * f->height)) != GIF_ERROR;
        for (uint32_t y = 0; y < f->height; y++)
            if (DGifGetLine(gif, f->indices + (size_t)y * f->width, (int)f->width) == GIF_ERROR) return 0;
        return 1;
    }
    static const uint32_t start[4] = { 0, 4, 2, 1 }, step[4] = { 8, 8, 4, 2 };
    for (int pass = 0; pass < 4; pass++)
        for (uint32_t y = start[pass]; y < f->height; y += step[pass])
            if (DGifGetLine(gif, f->indices + (size_t)y * f->width, (int)f->width) == GIF_ERROR) return 0;
    return 1;
}

wi_gif *wi_gif_open(const uint8_t *data, size_t length, uint64_t max_pixels, int tolerate, int *status,
                    char message[WI_MESSAGE_SIZE]) {
    *status = WI_ERR_CORRUPT;
    gif_reader reader = { data, length, 0 };
    int error = 0;
    GifFileType *gif = DGifOpen(&reader, gif_read_fn, &error);
    if (!gif) {
        wi_set_message(message, GifErrorString(error));
        if (error == D_GIF_ERR_READ_FAILED) *status = WI_ERR_TRUNCATED;
        return NULL;
    }
    wi_gif *g = calloc(1, sizeof *g);
    if (!g) { DGifCloseFile(gif, &error); *status = WI_ERR_NO_MEMORY; return NULL; }
    g->width = (uint32_t)gif->SWidth;
    g->height = (uint32_t)gif->SHeight;
    g->loop_count = -1;
    copy_palette(gif->SColorMap, g->palette, &g->palette_size);
    if (g->width == 0 || g->height == 0) { wi_set_message(message, "zero canvas dimension"); goto fail; }
    if ((uint64_t)g->width * g->height > max_pixels) {
        wi_set_message(message, "image dimensions over the decode limit");
        *status = WI_ERR_TOO_LARGE;
        goto fail;
    }
    int transparent = -1, disposal = 0, saw_loop = 0;
    uint32_t delay = 0;
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    do {
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) {
            // A stream cut or broken at a record boundary after complete frames plays the
            // frames before the break, as browsers play it.
            if (g->count > 0) break;
            wi_set_message(message, GifErrorString(gif->Error));
            if (gif->Error == D_GIF_ERR_READ_FAILED) *status = WI_ERR_TRUNCATED;
            goto fail;
        }
        if (type == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) == GIF_ERROR) {
                if (tolerate && g->count > 0) break;
                wi_set_message(message, GifErrorString(gif->Error));
                *status = gif->Error == D_GIF_ERR_READ_FAILED ? WI_ERR_TRUNCATED : WI_ERR_CORRUPT;
                goto fail;
            }
            GifImageDesc *desc = &gif->Image;
            uint32_t fw = (uint32_t)desc->Width, fh = (uint32_t)desc->Height;
            if ((uint64_t)fw * fh > max_pixels) {
                wi_set_message(message, "frame dimensions over the decode limit");
                *status = WI_ERR_TOO_LARGE;
                goto fail;
            }
            if (fw == 0 || fh == 0) {
                if (!skip_image_data(gif)) {
                    if (tolerate && g->count > 0) break;
                    wi_set_message(message, GifErrorString(gif->Error)); goto fail;
                }
                transparent = -1; disposal = 0; delay = 0;
                continue;
            }
            if (g->count == g->capacity) {
                uint32_t capacity = g->capacity ? g->capacity * 2 : 8;
                gif_frame *grown = realloc(g->frames, capacity * sizeof(gif_frame));
                if (!grown) { *status = WI_ERR_NO_MEMORY; goto fail; }
                g->frames = grown; g->capacity = capacity;
            }
            gif_frame *f = &g->frames[g->count];
            memset(f, 0, sizeof *f);
            f->left = (uint32_t)desc->Left; f->top = (uint32_t)desc->Top;
            f->width = fw; f->height = fh;
            f->transparent = transparent; f->disposal = disposal; f->delay_cs = delay;
            copy_palette(desc->ColorMap, f->palette, &f->palette_size);
            f->indices = malloc((size_t)fw * fh);
            if (!f->indices) { *status = WI_ERR_NO_MEMORY; goto fail; }
            if (!read_raster(gif, f, desc->Interlace)) {
                free(f->indices); f->indices = NULL;
                if (tolerate && g->count > 0) break;
                wi_set_message(message, GifErrorString(gif->Error));
                *status = gif->Error == D_GIF_ERR_READ_FAILED ? WI_ERR_TRUNCATED : WI_ERR_CORRUPT;
                goto fail;
            }
            g->count++;
            transparent = -1; disposal = 0; delay = 0;
        } else if (type == EXTENSION_RECORD_TYPE) {
            int code; GifByteType *ext;
            if (DGifGetExtension(gif, &code, &ext) == GIF_ERROR) {
                if (g->count > 0) break;
                wi_set_message(message, GifErrorString(gif->Error)); goto fail;
            }
            int netscape = 0;
            if (code == GRAPHICS_EXT_FUNC_CODE && ext && ext[0] >= 4) {
                disposal = (ext[1] >> 2) & 7;
                delay = (uint32_t)ext[2] | ((uint32_t)ext[3] << 8);
                transparent = (ext[1] & 1) ? ext[4] : -1;
            } else if (code == APPLICATION_EXT_FUNC_CODE && ext && ext[0] == 11 &&
                       (memcmp(ext + 1, "NETSCAPE2.0", 11) == 0 || memcmp(ext + 1, "ANIMEXTS1.0", 11) == 0)) {
                netscape = 1;
            }
            while (ext) {
                if (DGifGetExtensionNext(gif, &ext) == GIF_ERROR) {
                    if (g->count > 0) goto done;
                    wi_set_message(message, GifErrorString(gif->Error)); goto fail;
                }
                if (netscape && ext && ext[0] >= 3 && ext[1] == 1 && !saw_loop) {
                    g->loop_count = (int)(ext[2] | (ext[3] << 8));
                    saw_loop = 1;
                }
            }
        }
    } while (type != TERMINATE_RECORD_TYPE);
done:
    DGifCloseFile(gif, &error);
    if (g->count == 0) {
        wi_set_message(message, "no image in GIF");
        *status = WI_ERR_CORRUPT;
        wi_gif_close(g);
        return NULL;
    }
    *status = WI_OK;
    return g;
fail:
    DGifCloseFile(gif, &error);
    wi_gif_close(g);
    return NULL;
}

uint32_t wi_gif_width(const wi_gif *g) { return g->width; }
uint32_t wi_gif_height(const wi_gif *g) { return g->height; }
uint32_t wi_gif_frame_count(const wi_gif *g) { return g->count; }
int wi_gif_loop_count(const wi_gif *g) { return g->loop_count; }
uint32_t wi_gif_frame_delay(const wi_gif *g, uint32_t i) { return i < g->count ? g->frames[i].delay_cs : 0; }

static void draw_frame(wi_gif *g, const gif_frame *f) {
    const uint8_t *palette = f->palette_size ? f->palette : g->palette;
    int size = f->palette_size ? f->palette_size : g->palette_size;
    for (uint32_t row = 0; row < f->height; row++) {
        uint32_t y = f->top + row;
        if (y >= g->height) break;
        const uint8_t *src = f->indices + (size_t)row * f->width;
        uint8_t *dst = g->canvas + ((size_t)y * g->width) * 4;
        for (uint32_t col = 0; col < f->width; col++) {
            uint32_t x = f->left + col;
            if (x >= g->width) break;
            int index = src[col];
            if (index == f->transparent) continue;
            uint8_t *p = dst + (size_t)x * 4;
            if (index < size) {
                p[0] = palette[index * 3]; p[1] = palette[index * 3 + 1]; p[2] = palette[index * 3 + 2];
            } else {
                p[0] = p[1] = p[2] = 0; // out-of-range index: opaque black, as browsers draw it
            }
            p[3] = 255;
        }
    }
}

int wi_gif_render(wi_gif *g, uint32_t index, wi_image *out) {
    memset(out, 0, sizeof *out);
    if (index >= g->count) return WI_ERR_ARGUMENT;
    size_t size = (size_t)g->width * g->height * 4;
    if (!g->canvas) {
        g->canvas = calloc(1, size);
        g->saved = malloc(size);
        if (!g->canvas || !g->saved) return WI_ERR_NO_MEMORY;
        g->next = 0;
    }
    if (index < g->next) { memset(g->canvas, 0, size); g->next = 0; }
    while (g->next <= index) {
        uint32_t i = g->next;
        if (i > 0) {
            const gif_frame *p = &g->frames[i - 1];
            if (p->disposal == 2) wi_clear_rect(g->canvas, g->width, g->height, p->left, p->top, p->width, p->height);
            else if (p->disposal == 3) memcpy(g->canvas, g->saved, size);
        }
        if (g->frames[i].disposal == 3) memcpy(g->saved, g->canvas, size);
        draw_frame(g, &g->frames[i]);
        g->next++;
    }
    out->pixels = wi_alloc_bytes(size, 0);
    if (!out->pixels) return WI_ERR_NO_MEMORY;
    memcpy(out->pixels, g->canvas, size);
    out->width = g->width; out->height = g->height; out->rows_decoded = g->height;
    return WI_OK;
}

void wi_gif_close(wi_gif *g) {
    if (!g) return;
    for (uint32_t i = 0; i < g->count; i++) free(g->frames[i].indices);
    free(g->frames);
    free(g->canvas);
    free(g->saved);
    free(g);
}

// ---- encoding

struct wi_gif_encoder {
    GifFileType *gif;
    wi_buffer buffer;
    uint32_t width, height;
    int loop_count;
    int frames;
    int failed;
};

static int gif_write_fn(GifFileType *gif, const GifByteType *data, int length) {
    wi_gif_encoder *e = gif->UserData;
    if (wi_buffer_append(&e->buffer, data, (size_t)length) != WI_OK) { e->failed = 1; return 0; }
    return length;
}

wi_gif_encoder *wi_gif_encoder_create(uint32_t width, uint32_t height, int loop_count) {
    if (width == 0 || height == 0 || width > 65535 || height > 65535) return NULL;
    wi_gif_encoder *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    int error = 0;
    e->gif = EGifOpen(e, gif_write_fn, &error);
    if (!e->gif) { free(e); return NULL; }
    e->width = width; e->height = height; e->loop_count = loop_count;
    EGifSetGifVersion(e->gif, true);
    if (EGifPutScreenDesc(e->gif, (int)width, (int)height, 8, 0, NULL) == GIF_ERROR) { wi_gif_encoder_destroy(e); return NULL; }
    if (loop_count >= 0) {
        GifByteType app[11]; memcpy(app, "NETSCAPE2.0", 11);
        GifByteType sub[3] = { 1, (GifByteType)(loop_count & 0xff), (GifByteType)((loop_count >> 8) & 0xff) };
        if (EGifPutExtensionLeader(e->gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
            EGifPutExtensionBlock(e->gif, 11, app) == GIF_ERROR ||
            EGifPutExtensionBlock(e->gif, 3, sub) == GIF_ERROR ||
            EGifPutExtensionTrailer(e->gif) == GIF_ERROR) { wi_gif_encoder_destroy(e); return NULL; }
    }
    return e;
}

int wi_gif_encoder_add(wi_gif_encoder *e, const uint8_t *rgba, uint32_t delay_cs) {
    size_t n = (size_t)e->width * e->height;
    uint8_t *r = malloc(n), *gr = malloc(n), *b = malloc(n), *indices = malloc(n);
    GifColorType colors[256];
    int status = WI_ERR_NO_MEMORY;
    if (!r || !gr || !b || !indices) goto out;
    int has_transparency = 0;
    for (size_t i = 0; i < n; i++) {
        r[i] = rgba[i * 4]; gr[i] = rgba[i * 4 + 1]; b[i] = rgba[i * 4 + 2];
        if (rgba[i * 4 + 3] < 128) has_transparency = 1;
    }
    memset(colors, 0, sizeof colors);
    int size = has_transparency ? 128 : 256; // GifQuantizeBuffer wants a power of two
    status = WI_ERR_CORRUPT;
    if (GifQuantizeBuffer((unsigned)e->width, (unsigned)e->height, &size, r, gr, b, indices, colors) == GIF_ERROR) goto out;
    int transparent = -1;
    if (has_transparency) {
        transparent = 255;
        for (size_t i = 0; i < n; i++) if (rgba[i * 4 + 3] < 128) indices[i] = (uint8_t)transparent;
    }
    ColorMapObject *map = GifMakeMapObject(256, colors);
    if (!map) { status = WI_ERR_NO_MEMORY; goto out; }
    GifByteType gce[4] = { (GifByteType)((has_transparency ? 1 : 0) | (2 << 2)),
                           (GifByteType)(delay_cs & 0xff), (GifByteType)((delay_cs >> 8) & 0xff),
                           (GifByteType)(transparent < 0 ? 0 : transparent) };
    if (EGifPutExtension(e->gif, GRAPHICS_EXT_FUNC_CODE, 4, gce) == GIF_ERROR ||
        EGifPutImageDesc(e->gif, 0, 0, (int)e->width, (int)e->height, false, map) == GIF_ERROR) {
        GifFreeMapObject(map);
        goto out;
    }
    GifFreeMapObject(map);
    for (uint32_t y = 0; y < e->height; y++)
        if (EGifPutLine(e->gif, indices + (size_t)y * e->width, (int)e->width) == GIF_ERROR) goto out;
    e->frames++;
    status = e->failed ? WI_ERR_NO_MEMORY : WI_OK;
out:
    free(r); free(gr); free(b); free(indices);
    return status;
}

int wi_gif_encoder_finish(wi_gif_encoder *e, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    int error = 0;
    int ok = EGifCloseFile(e->gif, &error) != GIF_ERROR;
    e->gif = NULL;
    if (!ok || e->failed || e->frames == 0) return WI_ERR_CORRUPT;
    *out = e->buffer;
    memset(&e->buffer, 0, sizeof e->buffer);
    return WI_OK;
}

void wi_gif_encoder_destroy(wi_gif_encoder *e) {
    if (!e) return;
    int error = 0;
    if (e->gif) EGifCloseFile(e->gif, &error);
    free(e->buffer.data);
    free(e);
}

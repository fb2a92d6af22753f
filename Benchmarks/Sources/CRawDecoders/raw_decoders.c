#include "raw_decoders.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <png.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <gif_lib.h>

// Fresh buffers from malloc, as the library allocates them, so that the floor and our decoders
// pay the same for fresh memory.
static void *raw_alloc(size_t size) { return malloc(size); }

struct jerr { struct jpeg_error_mgr base; jmp_buf jump; };
static void jexit(j_common_ptr c) { longjmp(((struct jerr *)c->err)->jump, 1); }

int raw_jpeg_decode(const uint8_t *data, size_t length, int scale_num) {
    struct jpeg_decompress_struct cinfo;
    struct jerr err;
    cinfo.err = jpeg_std_error(&err.base);
    err.base.error_exit = jexit;
    unsigned char *volatile pixels = NULL;
    if (setjmp(err.jump)) { jpeg_destroy_decompress(&cinfo); free(pixels); return -1; }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)length);
    jpeg_read_header(&cinfo, TRUE);
    cinfo.out_color_space = JCS_EXT_RGBA;
    cinfo.scale_num = (unsigned)scale_num; cinfo.scale_denom = 8;
    jpeg_start_decompress(&cinfo);
    size_t stride = (size_t)cinfo.output_width * 4;
    pixels = raw_alloc(stride * cinfo.output_height);
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW rows[16];
        for (int i = 0; i < 16; i++) rows[i] = pixels + stride * (cinfo.output_scanline + (i < (int)(cinfo.output_height - cinfo.output_scanline) ? i : 0));
        jpeg_read_scanlines(&cinfo, rows, 16);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    free(pixels);
    return 0;
}

int raw_png_decode(const uint8_t *data, size_t length) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, length)) return -1;
    image.format = PNG_FORMAT_RGBA;
    void *pixels = malloc(PNG_IMAGE_SIZE(image));
    int ok = png_image_finish_read(&image, NULL, pixels, 0, NULL);
    free(pixels);
    return ok ? 0 : -1;
}

struct raw_png_source { const uint8_t *data; size_t length, offset; };

static void raw_png_source_read(png_structp png, png_bytep out, png_size_t count) {
    struct raw_png_source *source = png_get_io_ptr(png);
    if (count > source->length - source->offset) png_error(png, "truncated");
    memcpy(out, source->data + source->offset, count);
    source->offset += count;
}

// libpng's own reader, RGBA: with `deep`, 16-bit samples kept (native-endian RGBA16), what the
// simplified API cannot give (its 16-bit formats are linear light); with `whole`, into one image
// buffer, else every row inflated into one row buffer and none kept.
static int raw_png_read(const uint8_t *data, size_t length, int deep, int whole) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    struct raw_png_source source = { data, length, 0 };
    uint8_t *volatile pixels = NULL;
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(pixels);
        return -1;
    }
    png_set_read_fn(png, &source, raw_png_source_read);
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    size_t pixel = deep ? 8 : 4;
    if (png_get_color_type(png, info) == PNG_COLOR_TYPE_RGB) png_set_add_alpha(png, deep ? 0xffff : 0xff, PNG_FILLER_AFTER);
    if (deep) png_set_swap(png);
    png_read_update_info(png, info);
    pixels = malloc((size_t)w * (whole ? h : 1) * pixel);
    for (png_uint_32 y = 0; pixels && y < h; y++) png_read_row(png, pixels + (whole ? (size_t)y * w * pixel : 0), NULL);
    png_destroy_read_struct(&png, &info, NULL);
    int status = pixels ? 0 : -1;
    free(pixels);
    return status;
}

int raw_png_rows(const uint8_t *data, size_t length) { return raw_png_read(data, length, 0, 0); }

int raw_png_decode_16(const uint8_t *data, size_t length) { return raw_png_read(data, length, 1, 1); }

int raw_webp_decode(const uint8_t *data, size_t length) {
    int w, h;
    uint8_t *pixels = WebPDecodeRGBA(data, length, &w, &h);
    if (!pixels) return -1;
    WebPFree(pixels);
    return 0;
}

int raw_webp_anim_decode_all(const uint8_t *data, size_t length) {
    WebPData webp = { data, length };
    WebPAnimDecoderOptions options;
    WebPAnimDecoderOptionsInit(&options);
    options.color_mode = MODE_RGBA;
    WebPAnimDecoder *decoder = WebPAnimDecoderNew(&webp, &options);
    if (!decoder) return -1;
    WebPAnimInfo info;
    WebPAnimDecoderGetInfo(decoder, &info);
    size_t size = (size_t)info.canvas_width * info.canvas_height * 4;
    uint8_t **frames = calloc(info.frame_count + 1, sizeof(uint8_t *));
    uint32_t n = 0;
    while (WebPAnimDecoderHasMoreFrames(decoder) && n < info.frame_count) {
        uint8_t *buffer; int timestamp;
        if (!WebPAnimDecoderGetNext(decoder, &buffer, &timestamp)) break;
        frames[n] = malloc(size); memcpy(frames[n++], buffer, size);  // every frame kept, as a preload keeps them
    }
    for (uint32_t i = 0; i < n; i++) free(frames[i]);
    free(frames);
    WebPAnimDecoderDelete(decoder);
    return 0;
}

typedef struct { const uint8_t *data; size_t length, offset; } reader;
static int readfn(GifFileType *gif, GifByteType *buf, int n) {
    reader *r = gif->UserData;
    size_t left = r->length - r->offset, k = (size_t)n < left ? (size_t)n : left;
    memcpy(buf, r->data + r->offset, k); r->offset += k; return (int)k;
}

// DGifSlurp, then every frame drawn onto an RGBA canvas (no disposal) and kept: the least a
// GIF decoder that preloads its frames does.
int raw_gif_decode_all(const uint8_t *data, size_t length) {
    reader r = { data, length, 0 };
    int error;
    GifFileType *gif = DGifOpen(&r, readfn, &error);
    if (!gif || DGifSlurp(gif) != GIF_OK) { if (gif) DGifCloseFile(gif, &error); return -1; }
    size_t w = (size_t)gif->SWidth, h = (size_t)gif->SHeight;
    uint8_t *canvas = calloc(w * h, 4);
    uint8_t **frames = calloc((size_t)gif->ImageCount + 1, sizeof(uint8_t *));
    for (int i = 0; i < gif->ImageCount; i++) {
        SavedImage *s = &gif->SavedImages[i];
        ColorMapObject *map = s->ImageDesc.ColorMap ? s->ImageDesc.ColorMap : gif->SColorMap;
        GraphicsControlBlock gcb; gcb.TransparentColor = -1;
        DGifSavedExtensionToGCB(gif, i, &gcb);
        for (int y = 0; y < s->ImageDesc.Height; y++) {
            for (int x = 0; x < s->ImageDesc.Width; x++) {
                int index = s->RasterBits[y * s->ImageDesc.Width + x];
                size_t cx = (size_t)(s->ImageDesc.Left + x), cy = (size_t)(s->ImageDesc.Top + y);
                if (index == gcb.TransparentColor || cx >= w || cy >= h || index >= map->ColorCount) continue;
                uint8_t *p = canvas + (cy * w + cx) * 4;
                p[0] = map->Colors[index].Red; p[1] = map->Colors[index].Green; p[2] = map->Colors[index].Blue; p[3] = 255;
            }
        }
        frames[i] = malloc(w * h * 4); memcpy(frames[i], canvas, w * h * 4);  // every frame kept
    }
    for (int i = 0; i < gif->ImageCount; i++) free(frames[i]);
    free(frames);
    free(canvas);
    DGifCloseFile(gif, &error);
    return 0;
}

void raw_narrow_16_to_8(const uint16_t *in, size_t pixels, uint8_t *out) {
    for (size_t i = 0; i < pixels * 4; i++) out[i] = (uint8_t)(in[i] >> 8);
}

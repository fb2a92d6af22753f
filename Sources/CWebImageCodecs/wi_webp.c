#include "wi_internal.h"
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/demux.h>
#include <webp/mux.h>
#include <stdlib.h>
#include <string.h>

int wi_webp_read_info(const uint8_t *data, size_t length, wi_webp_info *info) {
    memset(info, 0, sizeof *info);
    WebPData webp = { data, length };
    WebPDemuxState state;
    WebPDemuxer *demux = WebPDemuxPartial(&webp, &state);
    if (!demux || state < WEBP_DEMUX_PARSED_HEADER) {
        WebPDemuxDelete(demux);
        wi_set_message(info->message, "not a WebP container");
        return WI_ERR_CORRUPT;
    }
    info->width = WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH);
    info->height = WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
    uint32_t flags = WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS);
    info->has_animation = (flags & ANIMATION_FLAG) != 0;
    info->has_alpha = (flags & ALPHA_FLAG) != 0;
    info->frame_count = WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT);
    info->loop_count = WebPDemuxGetI(demux, WEBP_FF_LOOP_COUNT);
    int complete = state == WEBP_DEMUX_DONE;
    WebPDemuxDelete(demux);
    if (!info->has_animation) {
        WebPBitstreamFeatures features;
        if (WebPGetFeatures(data, length, &features) == VP8_STATUS_OK) info->has_alpha = features.has_alpha;
    }
    return complete ? WI_OK : WI_ERR_TRUNCATED;
}

int wi_webp_chunk(const uint8_t *data, size_t length, const char *fourcc, size_t *offset, size_t *chunk_length);

int wi_webp_exif(const uint8_t *data, size_t length, size_t *offset, size_t *exif_length) {
    return wi_webp_chunk(data, length, "EXIF", offset, exif_length);
}

int wi_webp_chunk(const uint8_t *data, size_t length, const char *fourcc, size_t *offset, size_t *chunk_length) {
    WebPData webp = { data, length };
    WebPDemuxer *demux = WebPDemux(&webp);
    if (!demux) return WI_ERR_CORRUPT;
    WebPChunkIterator chunk;
    int found = WebPDemuxGetChunk(demux, fourcc, 1, &chunk);
    if (found) {
        *offset = (size_t)(chunk.chunk.bytes - data);
        *chunk_length = chunk.chunk.size;
        WebPDemuxReleaseChunkIterator(&chunk);
    }
    WebPDemuxDelete(demux);
    return found ? WI_OK : WI_NEED_MORE;
}

int wi_webp_decode(const uint8_t *data, size_t length, uint32_t sw, uint32_t sh, uint64_t max_pixels,
                   wi_image *out) {
    memset(out, 0, sizeof *out);
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return WI_ERR_UNSUPPORTED;
    if (WebPGetFeatures(data, length, &config.input) != VP8_STATUS_OK) {
        wi_set_message(out->message, "invalid WebP header");
        return WI_ERR_CORRUPT;
    }
    uint32_t w = (uint32_t)config.input.width, h = (uint32_t)config.input.height;
    if (w == 0 || h == 0) return WI_ERR_CORRUPT;
    if ((uint64_t)w * h > max_pixels) {
        out->width = w; out->height = h;
        wi_set_message(out->message, "image dimensions over the decode limit");
        return WI_ERR_TOO_LARGE;
    }
    if (sw && sh && (sw != w || sh != h)) {
        config.options.use_scaling = 1;
        config.options.scaled_width = (int)sw;
        config.options.scaled_height = (int)sh;
        w = sw; h = sh;
    }
    uint8_t *pixels = wi_alloc_pixels(w, h, 0);
    if (!pixels) return WI_ERR_NO_MEMORY;
    config.output.colorspace = MODE_RGBA;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = pixels;
    config.output.u.RGBA.stride = (int)(w * 4);
    config.output.u.RGBA.size = (size_t)w * h * 4;
    VP8StatusCode code = WebPDecode(data, length, &config);
    WebPFreeDecBuffer(&config.output);
    if (code != VP8_STATUS_OK) {
        free(pixels);
        wi_set_message(out->message, code == VP8_STATUS_NOT_ENOUGH_DATA ? "truncated WebP data" : "corrupt WebP data");
        return code == VP8_STATUS_NOT_ENOUGH_DATA ? WI_ERR_TRUNCATED : WI_ERR_CORRUPT;
    }
    out->pixels = pixels;
    out->width = w; out->height = h; out->rows_decoded = h;
    return WI_OK;
}

// ---- animation

struct wi_webp_anim {
    uint8_t *data;
    size_t length;
    WebPAnimDecoder *decoder;
    uint32_t width, height, count;
    uint32_t *durations;
    uint32_t next;          // index of the frame the decoder returns next
    uint8_t *last;          // decoder-owned canvas of frame next-1
};

wi_webp_anim *wi_webp_anim_create(const uint8_t *data, size_t length, uint64_t max_pixels, int *status,
                                  char message[WI_MESSAGE_SIZE]) {
    *status = WI_ERR_CORRUPT;
    wi_webp_anim *a = calloc(1, sizeof *a);
    if (!a) { *status = WI_ERR_NO_MEMORY; return NULL; }
    a->data = malloc(length ? length : 1);
    if (!a->data) { free(a); *status = WI_ERR_NO_MEMORY; return NULL; }
    memcpy(a->data, data, length);
    a->length = length;
    WebPData webp = { a->data, length };
    WebPDemuxer *demux = WebPDemux(&webp);
    if (!demux) { wi_set_message(message, "invalid or truncated WebP container"); goto fail; }
    a->width = WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH);
    a->height = WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
    a->count = WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT);
    if ((uint64_t)a->width * a->height > max_pixels) {
        WebPDemuxDelete(demux);
        wi_set_message(message, "image dimensions over the decode limit");
        *status = WI_ERR_TOO_LARGE;
        goto fail;
    }
    if (a->count == 0 || a->width == 0 || a->height == 0) {
        WebPDemuxDelete(demux);
        wi_set_message(message, "animation without frames");
        goto fail;
    }
    a->durations = calloc(a->count, sizeof(uint32_t));
    if (!a->durations) { WebPDemuxDelete(demux); *status = WI_ERR_NO_MEMORY; goto fail; }
    WebPIterator it;
    if (WebPDemuxGetFrame(demux, 1, &it)) {
        uint32_t i = 0;
        do { if (i < a->count) a->durations[i++] = (uint32_t)(it.duration > 0 ? it.duration : 0); }
        while (WebPDemuxNextFrame(&it));
        WebPDemuxReleaseIterator(&it);
    }
    WebPDemuxDelete(demux);
    WebPAnimDecoderOptions options;
    WebPAnimDecoderOptionsInit(&options);
    options.color_mode = MODE_RGBA;
    options.use_threads = 0;
    a->decoder = WebPAnimDecoderNew(&webp, &options);
    if (!a->decoder) { wi_set_message(message, "invalid animated WebP"); goto fail; }
    *status = WI_OK;
    return a;
fail:
    wi_webp_anim_destroy(a);
    return NULL;
}

uint32_t wi_webp_anim_frame_count(const wi_webp_anim *a) { return a->count; }
uint32_t wi_webp_anim_frame_duration(const wi_webp_anim *a, uint32_t i) { return i < a->count ? a->durations[i] : 0; }

int wi_webp_anim_render(wi_webp_anim *a, uint32_t index, wi_image *out) {
    memset(out, 0, sizeof *out);
    if (index >= a->count) return WI_ERR_ARGUMENT;
    if (!(a->last && index + 1 == a->next)) {
        if (index < a->next) { WebPAnimDecoderReset(a->decoder); a->next = 0; a->last = NULL; }
        while (a->next <= index) {
            uint8_t *buffer; int timestamp;
            if (!WebPAnimDecoderGetNext(a->decoder, &buffer, &timestamp)) {
                WebPAnimDecoderReset(a->decoder); a->next = 0; a->last = NULL;
                wi_set_message(out->message, "corrupt animation frame");
                return WI_ERR_CORRUPT;
            }
            a->last = buffer;
            a->next++;
        }
    }
    out->pixels = wi_alloc_pixels(a->width, a->height, 0);
    if (!out->pixels) return WI_ERR_NO_MEMORY;
    memcpy(out->pixels, a->last, (size_t)a->width * a->height * 4);
    out->width = a->width; out->height = a->height; out->rows_decoded = a->height;
    return WI_OK;
}

void wi_webp_anim_destroy(wi_webp_anim *a) {
    if (!a) return;
    if (a->decoder) WebPAnimDecoderDelete(a->decoder);
    free(a->durations);
    free(a->data);
    free(a);
}

// ---- incremental

struct wi_webp_incremental {
    WebPIDecoder *decoder;
    int status;
};

wi_webp_incremental *wi_webp_incremental_create(void) {
    wi_webp_incremental *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->decoder = WebPINewRGB(MODE_RGBA, NULL, 0, 0);
    if (!d->decoder) { free(d); return NULL; }
    d->status = WI_NEED_MORE;
    return d;
}

int wi_webp_incremental_append(wi_webp_incremental *d, const uint8_t *data, size_t length) {
    if (d->status != WI_NEED_MORE) return d->status;
    VP8StatusCode code = WebPIAppend(d->decoder, data, length);
    if (code == VP8_STATUS_OK) d->status = WI_OK;
    else if (code == VP8_STATUS_SUSPENDED) d->status = WI_NEED_MORE;
    else if (code == VP8_STATUS_UNSUPPORTED_FEATURE) d->status = WI_ERR_UNSUPPORTED;
    else d->status = WI_ERR_CORRUPT;
    return d->status;
}

int wi_webp_incremental_snapshot(const wi_webp_incremental *d, wi_image *out) {
    memset(out, 0, sizeof *out);
    int last_y = 0, w = 0, h = 0, stride = 0;
    const uint8_t *rgba = WebPIDecGetRGB(d->decoder, &last_y, &w, &h, &stride);
    if (!rgba || w <= 0 || h <= 0) return WI_NEED_MORE;
    out->pixels = wi_alloc_pixels((uint32_t)w, (uint32_t)h, 1);
    if (!out->pixels) return WI_ERR_NO_MEMORY;
    for (int y = 0; y < last_y && y < h; y++)
        memcpy(out->pixels + (size_t)y * w * 4, rgba + (size_t)y * stride, (size_t)w * 4);
    out->width = (uint32_t)w; out->height = (uint32_t)h;
    out->rows_decoded = (uint32_t)(last_y < 0 ? 0 : last_y);
    return WI_OK;
}

uint32_t wi_webp_incremental_rows(const wi_webp_incremental *d) {
    int last_y = 0, w = 0, h = 0, stride = 0;
    if (!WebPIDecGetRGB(d->decoder, &last_y, &w, &h, &stride) || last_y < 0) return 0;
    return (uint32_t)last_y;
}

void wi_webp_incremental_destroy(wi_webp_incremental *d) {
    if (!d) return;
    WebPIDelete(d->decoder);
    free(d);
}

// ---- encoding

// Appends `size` bytes of WebP to `out`, with `icc` set as its ICCP chunk when given.
static int append_with_icc(const uint8_t *bytes, size_t size, const uint8_t *icc, size_t icc_length, wi_buffer *out) {
    if (!icc || icc_length == 0) return wi_buffer_append(out, bytes, size);
    WebPData image = { bytes, size }, profile = { icc, icc_length }, assembled;
    WebPDataInit(&assembled);
    WebPMux *mux = WebPMuxCreate(&image, 0);
    int ok = mux && WebPMuxSetChunk(mux, "ICCP", &profile, 0) == WEBP_MUX_OK && WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK;
    WebPMuxDelete(mux);
    int status = ok ? wi_buffer_append(out, assembled.bytes, assembled.size) : WI_ERR_CORRUPT;
    if (!ok) wi_set_message(out->message, "the WebP container could not take the ICC profile");
    WebPDataClear(&assembled);
    return status;
}

int wi_webp_encode(const uint8_t *rgba, uint32_t width, uint32_t height, float quality, int lossless,
                   const uint8_t *icc, size_t icc_length, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    if (width == 0 || height == 0 || width > WEBP_MAX_DIMENSION || height > WEBP_MAX_DIMENSION) return WI_ERR_ARGUMENT;
    uint8_t *encoded = NULL;
    size_t size = lossless
        ? WebPEncodeLosslessRGBA(rgba, (int)width, (int)height, (int)width * 4, &encoded)
        : WebPEncodeRGBA(rgba, (int)width, (int)height, (int)width * 4, quality, &encoded);
    if (size == 0 || !encoded) { wi_set_message(out->message, "WebP encoding failed"); return WI_ERR_CORRUPT; }
    int status = append_with_icc(encoded, size, icc, icc_length, out);
    WebPFree(encoded);
    return status;
}

struct wi_webp_anim_encoder {
    WebPAnimEncoder *encoder;
    uint32_t width, height;
    int timestamp;
};

wi_webp_anim_encoder *wi_webp_anim_encoder_create(uint32_t width, uint32_t height, uint32_t loop_count) {
    if (width == 0 || height == 0 || width > WEBP_MAX_DIMENSION || height > WEBP_MAX_DIMENSION) return NULL;
    wi_webp_anim_encoder *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    WebPAnimEncoderOptions options;
    if (!WebPAnimEncoderOptionsInit(&options)) { free(e); return NULL; }
    options.anim_params.loop_count = (int)loop_count;
    e->encoder = WebPAnimEncoderNew((int)width, (int)height, &options);
    if (!e->encoder) { free(e); return NULL; }
    e->width = width; e->height = height;
    return e;
}

int wi_webp_anim_encoder_add(wi_webp_anim_encoder *e, const uint8_t *rgba, uint32_t duration_ms, float quality,
                             int lossless) {
    WebPConfig config;
    WebPPicture picture;
    if (!WebPConfigInit(&config) || !WebPPictureInit(&picture)) return WI_ERR_UNSUPPORTED;
    config.quality = quality;
    config.lossless = lossless;
    picture.use_argb = 1;
    picture.width = (int)e->width;
    picture.height = (int)e->height;
    if (!WebPPictureImportRGBA(&picture, rgba, (int)e->width * 4)) return WI_ERR_NO_MEMORY;
    int ok = WebPAnimEncoderAdd(e->encoder, &picture, e->timestamp, &config);
    WebPPictureFree(&picture);
    e->timestamp += (int)duration_ms;
    return ok ? WI_OK : WI_ERR_CORRUPT;
}

int wi_webp_anim_encoder_finish(wi_webp_anim_encoder *e, const uint8_t *icc, size_t icc_length, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    if (!WebPAnimEncoderAdd(e->encoder, NULL, e->timestamp, NULL)) return WI_ERR_CORRUPT;
    WebPData data;
    WebPDataInit(&data);
    if (!WebPAnimEncoderAssemble(e->encoder, &data)) { wi_set_message(out->message, "WebP animation assembly failed"); return WI_ERR_CORRUPT; }
    int status = append_with_icc(data.bytes, data.size, icc, icc_length, out);
    WebPDataClear(&data);
    return status;
}

void wi_webp_anim_encoder_destroy(wi_webp_anim_encoder *e) {
    if (!e) return;
    WebPAnimEncoderDelete(e->encoder);
    free(e);
}

int wi_webp_strip_metadata(const uint8_t *data, size_t length, const uint8_t *exif, size_t exif_length,
                           const uint8_t *xmp, size_t xmp_length, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    WebPData input = { data, length }, assembled;
    WebPDataInit(&assembled);
    WebPMux *mux = WebPMuxCreate(&input, 0);
    if (!mux) { wi_set_message(out->message, "libwebpmux could not read the WebP container"); return WI_ERR_CORRUPT; }
    WebPMuxError deleted_exif = WebPMuxDeleteChunk(mux, "EXIF"), deleted_xmp = WebPMuxDeleteChunk(mux, "XMP ");
    int ok = (deleted_exif == WEBP_MUX_OK || deleted_exif == WEBP_MUX_NOT_FOUND)
        && (deleted_xmp == WEBP_MUX_OK || deleted_xmp == WEBP_MUX_NOT_FOUND);
    if (ok && exif && exif_length > 0) {
        WebPData block = { exif, exif_length };
        ok = WebPMuxSetChunk(mux, "EXIF", &block, 1) == WEBP_MUX_OK;
    }
    if (ok && xmp && xmp_length > 0) {
        WebPData block = { xmp, xmp_length };
        ok = WebPMuxSetChunk(mux, "XMP ", &block, 1) == WEBP_MUX_OK;
    }
    ok = ok && WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK;
    WebPMuxDelete(mux);
    int status = ok ? wi_buffer_append(out, assembled.bytes, assembled.size) : WI_ERR_CORRUPT;
    if (!ok) wi_set_message(out->message, "libwebpmux could not rewrite the WebP container");
    WebPDataClear(&assembled);
    return status;
}

#include "wi_jxl.h"
#include <jxl/decode.h>
#include <jxl/encode.h>
#include <stdlib.h>
#include <string.h>

static const JxlPixelFormat rgba8 = { 4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0 };
static const JxlPixelFormat rgba16 = { 4, JXL_TYPE_UINT16, JXL_NATIVE_ENDIAN, 0 };

/// Fills the displayed size, alpha, animation and limit facts from the basic info.
static int read_basic_info(const JxlBasicInfo *basic, uint64_t max_pixels, wi_jxl_info *info) {
    if (basic->xsize == 0 || basic->ysize == 0) {
        wi_say(info->message, "zero image dimension");
        return WI_ERR_CORRUPT;
    }
    int swap = basic->orientation > 4;
    info->width = swap ? basic->ysize : basic->xsize;
    info->height = swap ? basic->xsize : basic->ysize;
    info->bits_per_sample = basic->bits_per_sample;
    info->has_alpha = basic->alpha_bits > 0;
    info->orientation = (int)basic->orientation;
    info->has_animation = basic->have_animation ? 1 : 0;
    info->loop_count = basic->have_animation ? basic->animation.num_loops : 0;
    if (max_pixels && (uint64_t)basic->xsize * basic->ysize > max_pixels) {
        wi_say(info->message, "%ux%u is over the pixel limit", basic->xsize, basic->ysize);
        return WI_ERR_TOO_LARGE;
    }
    return WI_OK;
}

/// The CICP code points of an encoded colour profile, when it maps onto them: an RGB one only
/// (libjxl leaves a grey encoding's primaries unset, whatever the caller's struct held).
static void read_cicp(const JxlColorEncoding *color, wi_jxl_info *info) {
    if (color->color_space != JXL_COLOR_SPACE_RGB) return;
    uint16_t primaries;
    switch (color->primaries) {
    case JXL_PRIMARIES_SRGB: primaries = 1; break;
    case JXL_PRIMARIES_2100: primaries = 9; break;
    case JXL_PRIMARIES_P3: primaries = color->white_point == JXL_WHITE_POINT_DCI ? 11 : 12; break;
    default: return;
    }
    if (color->white_point != JXL_WHITE_POINT_D65 && color->primaries != JXL_PRIMARIES_P3) return;
    switch (color->transfer_function) {
    case JXL_TRANSFER_FUNCTION_709: case JXL_TRANSFER_FUNCTION_LINEAR: case JXL_TRANSFER_FUNCTION_SRGB:
    case JXL_TRANSFER_FUNCTION_PQ: case JXL_TRANSFER_FUNCTION_DCI: case JXL_TRANSFER_FUNCTION_HLG: break;
    default: return;
    }
    info->has_cicp = 1;
    info->color_primaries = primaries;
    info->transfer_characteristics = (uint16_t)color->transfer_function;
}

struct wi_jxl {
    JxlDecoder *decoder;
    uint8_t *data;
    size_t length;
    uint32_t next;               // the frame the decoder produces next
    uint32_t frame_count;
    double *durations;
    uint8_t *icc;
    size_t icc_length;
    uint32_t width, height;
    uint32_t bits_per_sample;
};

/// Starts decoding pixels from the first frame.
static int restart(wi_jxl *jxl) {
    JxlDecoderRewind(jxl->decoder);
    jxl->next = 0;
    if (JxlDecoderSubscribeEvents(jxl->decoder, JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS
        || JxlDecoderSetUnpremultiplyAlpha(jxl->decoder, JXL_TRUE) != JXL_DEC_SUCCESS
        || JxlDecoderSetInput(jxl->decoder, jxl->data, jxl->length) != JXL_DEC_SUCCESS) return WI_ERR_CORRUPT;
    JxlDecoderCloseInput(jxl->decoder);
    return WI_OK;
}

wi_jxl *wi_jxl_open(const uint8_t *data, size_t length, uint64_t max_pixels, wi_jxl_info *info, int *status) {
    memset(info, 0, sizeof *info);
    wi_jxl *jxl = calloc(1, sizeof *jxl);
    if (!jxl || !(jxl->data = malloc(length ? length : 1)) || !(jxl->decoder = JxlDecoderCreate(NULL))) {
        wi_jxl_close(jxl);
        *status = WI_ERR_NO_MEMORY;
        return NULL;
    }
    memcpy(jxl->data, data, length);
    jxl->length = length;
    JxlDecoder *decoder = jxl->decoder;
    JxlBasicInfo basic;
    memset(&basic, 0, sizeof basic);
    size_t capacity = 0;
    int result = WI_OK;
    if (JxlDecoderSubscribeEvents(decoder, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FRAME) != JXL_DEC_SUCCESS
        || JxlDecoderSetInput(decoder, jxl->data, length) != JXL_DEC_SUCCESS) {
        result = WI_ERR_CORRUPT;
        goto done;
    }
    JxlDecoderCloseInput(decoder);
    for (;;) {
        JxlDecoderStatus event = JxlDecoderProcessInput(decoder);
        if (event == JXL_DEC_SUCCESS) break;
        if (event == JXL_DEC_ERROR) {
            wi_say(info->message, "corrupt JPEG XL data");
            result = WI_ERR_CORRUPT;
            goto done;
        }
        if (event == JXL_DEC_NEED_MORE_INPUT) {
            wi_say(info->message, "the data is truncated");
            result = WI_ERR_TRUNCATED;
            goto done;
        }
        if (event == JXL_DEC_BASIC_INFO) {
            if (JxlDecoderGetBasicInfo(decoder, &basic) != JXL_DEC_SUCCESS) { result = WI_ERR_CORRUPT; goto done; }
            if ((result = read_basic_info(&basic, max_pixels, info)) != WI_OK) goto done;
        } else if (event == JXL_DEC_COLOR_ENCODING) {
            JxlColorEncoding color;
            memset(&color, 0, sizeof color);
            if (JxlDecoderGetColorAsEncodedProfile(decoder, &rgba8, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &color) == JXL_DEC_SUCCESS)
                read_cicp(&color, info);
            size_t size = 0;
            if (JxlDecoderGetICCProfileSize(decoder, &rgba8, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS && size > 0
                && (jxl->icc = malloc(size))) {
                if (JxlDecoderGetColorAsICCProfile(decoder, &rgba8, JXL_COLOR_PROFILE_TARGET_DATA, jxl->icc, size) == JXL_DEC_SUCCESS)
                    jxl->icc_length = size;
            }
        } else if (event == JXL_DEC_FRAME) {
            JxlFrameHeader header;
            if (JxlDecoderGetFrameHeader(decoder, &header) != JXL_DEC_SUCCESS) { result = WI_ERR_CORRUPT; goto done; }
            if (jxl->frame_count == capacity) {
                capacity = capacity ? capacity * 2 : 8;
                double *grown = realloc(jxl->durations, capacity * sizeof *grown);
                if (!grown) { result = WI_ERR_NO_MEMORY; goto done; }
                jxl->durations = grown;
            }
            double tick = basic.have_animation && basic.animation.tps_numerator
                ? (double)basic.animation.tps_denominator / basic.animation.tps_numerator : 0;
            jxl->durations[jxl->frame_count++] = header.duration * tick;
        }
    }
    if (jxl->frame_count == 0) {
        wi_say(info->message, "no frame");
        result = WI_ERR_CORRUPT;
        goto done;
    }
    info->frame_count = jxl->frame_count;
    jxl->width = info->width;
    jxl->height = info->height;
    jxl->bits_per_sample = info->bits_per_sample;
    result = restart(jxl);
done:
    *status = result;
    if (result != WI_OK) {
        wi_jxl_close(jxl);
        return NULL;
    }
    return jxl;
}

double wi_jxl_frame_duration(const wi_jxl *jxl, uint32_t index) {
    return jxl->frame_count > 1 && index < jxl->frame_count ? jxl->durations[index] : 0;
}

int wi_jxl_render(wi_jxl *jxl, uint32_t index, wi_image *out) { return wi_jxl_render_at(jxl, index, 0, out); }

int wi_jxl_render_at(wi_jxl *jxl, uint32_t index, int deep, wi_image *out) {
    memset(out, 0, sizeof *out);
    // At depth only when there is depth to keep: an 8-bit image is RGBA8 either way.
    deep = deep && jxl->bits_per_sample > 8;
    const JxlPixelFormat *format = deep ? &rgba16 : &rgba8;
    if (index >= jxl->frame_count) return WI_ERR_ARGUMENT;
    if (index < jxl->next && restart(jxl) != WI_OK) return WI_ERR_CORRUPT;
    if (index > jxl->next) {
        JxlDecoderSkipFrames(jxl->decoder, index - jxl->next);
        jxl->next = index;
    }
    uint8_t *pixels = NULL;
    size_t size = (size_t)jxl->width * jxl->height * (deep ? 8 : 4);
    for (;;) {
        JxlDecoderStatus event = JxlDecoderProcessInput(jxl->decoder);
        if (event == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t needed = 0;
            if (JxlDecoderImageOutBufferSize(jxl->decoder, format, &needed) != JXL_DEC_SUCCESS || needed != size) {
                wi_say(out->message, "frame %u does not have the declared size", index);
                free(pixels);
                restart(jxl);
                return WI_ERR_CORRUPT;
            }
            if (!pixels && !(pixels = deep ? wi_alloc_bytes(size, 0) : wi_alloc_pixels(jxl->width, jxl->height, 0))) return WI_ERR_NO_MEMORY;
            if (JxlDecoderSetImageOutBuffer(jxl->decoder, format, pixels, size) != JXL_DEC_SUCCESS) {
                free(pixels);
                restart(jxl);
                return WI_ERR_CORRUPT;
            }
        } else if (event == JXL_DEC_FULL_IMAGE) {
            if (!pixels) continue;   // a frame that is not displayed
            jxl->next = index + 1;
            out->pixels = pixels;
            out->deep = deep ? 1 : 0;
            out->width = jxl->width;
            out->height = jxl->height;
            out->rows_decoded = jxl->height;
            return WI_OK;
        } else {
            free(pixels);
            int status = event == JXL_DEC_NEED_MORE_INPUT ? WI_ERR_TRUNCATED : WI_ERR_CORRUPT;
            wi_say(out->message, event == JXL_DEC_NEED_MORE_INPUT ? "the data is truncated" : "corrupt JPEG XL data");
            restart(jxl);
            return status;
        }
    }
}

size_t wi_jxl_icc(const wi_jxl *jxl, const uint8_t **bytes) {
    *bytes = jxl->icc;
    return jxl->icc_length;
}

void wi_jxl_close(wi_jxl *jxl) {
    if (!jxl) return;
    if (jxl->decoder) JxlDecoderDestroy(jxl->decoder);
    free(jxl->data);
    free(jxl->durations);
    free(jxl->icc);
    free(jxl);
}

// ---- Streaming

struct wi_jxl_stream {
    JxlDecoder *decoder;
    uint64_t max_pixels;
    uint8_t *pending;            // bytes libjxl has not consumed yet
    size_t pending_length, pending_capacity;
    wi_jxl_info info;
    int header_read, header_reported, finished, failed, new_pass;
    uint8_t *canvas;             // libjxl's output buffer, set once
    size_t canvas_size;
    uint8_t *icc;                // the decoded pixels' ICC profile
    size_t icc_length;
    char message[WI_MESSAGE_SIZE];
};

wi_jxl_stream *wi_jxl_stream_create(uint64_t max_pixels) {
    wi_jxl_stream *stream = calloc(1, sizeof *stream);
    if (!stream) return NULL;
    stream->max_pixels = max_pixels;
    stream->decoder = JxlDecoderCreate(NULL);
    if (!stream->decoder
        || JxlDecoderSubscribeEvents(stream->decoder, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FRAME_PROGRESSION
                                     | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS
        || JxlDecoderSetUnpremultiplyAlpha(stream->decoder, JXL_TRUE) != JXL_DEC_SUCCESS
        || JxlDecoderSetProgressiveDetail(stream->decoder, kPasses) != JXL_DEC_SUCCESS) {
        wi_jxl_stream_destroy(stream);
        return NULL;
    }
    return stream;
}

static int fail(wi_jxl_stream *stream, int status, const char *text) {
    stream->failed = status;
    wi_say(stream->message, "%s", text);
    return status;
}

int wi_jxl_stream_append(wi_jxl_stream *stream, const uint8_t *data, size_t length) {
    if (stream->failed) return stream->failed;
    if (stream->finished) return WI_OK;
    if (stream->pending_length + length > stream->pending_capacity) {
        size_t capacity = (stream->pending_length + length) * 2;
        uint8_t *grown = realloc(stream->pending, capacity);
        if (!grown) return fail(stream, WI_ERR_NO_MEMORY, "out of memory");
        stream->pending = grown;
        stream->pending_capacity = capacity;
    }
    memcpy(stream->pending + stream->pending_length, data, length);
    stream->pending_length += length;
    JxlDecoder *decoder = stream->decoder;
    if (JxlDecoderSetInput(decoder, stream->pending, stream->pending_length) != JXL_DEC_SUCCESS)
        return fail(stream, WI_ERR_CORRUPT, "corrupt JPEG XL data");
    int result = WI_NEED_MORE;
    for (;;) {
        JxlDecoderStatus event = JxlDecoderProcessInput(decoder);
        if (event == JXL_DEC_NEED_MORE_INPUT) break;
        if (event == JXL_DEC_ERROR) {
            JxlDecoderReleaseInput(decoder);
            return fail(stream, WI_ERR_CORRUPT, "corrupt JPEG XL data");
        }
        if (event == JXL_DEC_BASIC_INFO) {
            JxlBasicInfo basic;
            if (JxlDecoderGetBasicInfo(decoder, &basic) != JXL_DEC_SUCCESS) {
                JxlDecoderReleaseInput(decoder);
                return fail(stream, WI_ERR_CORRUPT, "corrupt JPEG XL header");
            }
            int status = read_basic_info(&basic, stream->max_pixels, &stream->info);
            if (status != WI_OK) {
                JxlDecoderReleaseInput(decoder);
                return fail(stream, status, stream->info.message);
            }
            stream->header_read = 1;
        } else if (event == JXL_DEC_COLOR_ENCODING) {
            JxlColorEncoding color;
            memset(&color, 0, sizeof color);
            if (JxlDecoderGetColorAsEncodedProfile(decoder, &rgba8, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &color) == JXL_DEC_SUCCESS)
                read_cicp(&color, &stream->info);
            size_t size = 0;
            if (!stream->icc && JxlDecoderGetICCProfileSize(decoder, &rgba8, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS
                && size > 0 && (stream->icc = malloc(size))) {
                if (JxlDecoderGetColorAsICCProfile(decoder, &rgba8, JXL_COLOR_PROFILE_TARGET_DATA, stream->icc, size) == JXL_DEC_SUCCESS)
                    stream->icc_length = size;
            }
        } else if (event == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t size = (size_t)stream->info.width * stream->info.height * 4, needed = 0;
            if (JxlDecoderImageOutBufferSize(decoder, &rgba8, &needed) != JXL_DEC_SUCCESS || needed != size) {
                JxlDecoderReleaseInput(decoder);
                return fail(stream, WI_ERR_CORRUPT, "a frame does not have the declared size");
            }
            if (!stream->canvas && !(stream->canvas = wi_alloc_pixels(stream->info.width, stream->info.height, 1))) {
                JxlDecoderReleaseInput(decoder);
                return fail(stream, WI_ERR_NO_MEMORY, "out of memory");
            }
            stream->canvas_size = size;
            if (JxlDecoderSetImageOutBuffer(decoder, &rgba8, stream->canvas, size) != JXL_DEC_SUCCESS) {
                JxlDecoderReleaseInput(decoder);
                return fail(stream, WI_ERR_CORRUPT, "corrupt JPEG XL data");
            }
        } else if (event == JXL_DEC_FRAME_PROGRESSION) {
            stream->new_pass = 1;
        } else if (event == JXL_DEC_FULL_IMAGE || event == JXL_DEC_SUCCESS) {
            // The first displayed frame is complete; a still image is done (an animation is
            // decoded whole by the caller).
            stream->finished = 1;
            result = WI_OK;
            break;
        }
    }
    size_t remaining = JxlDecoderReleaseInput(decoder);
    if (remaining > stream->pending_length) remaining = stream->pending_length;
    memmove(stream->pending, stream->pending + stream->pending_length - remaining, remaining);
    stream->pending_length = remaining;
    if (result == WI_NEED_MORE && stream->header_read && !stream->header_reported) {
        stream->header_reported = 1;
        return WI_HEADER;
    }
    return result;
}

size_t wi_jxl_stream_icc(const wi_jxl_stream *stream, const uint8_t **bytes) {
    *bytes = stream->icc;
    return stream->icc_length;
}

int wi_jxl_stream_header(const wi_jxl_stream *stream, wi_jxl_info *info) {
    if (!stream->header_read) return WI_NEED_MORE;
    *info = stream->info;
    return WI_OK;
}

int wi_jxl_stream_render(wi_jxl_stream *stream, int final, wi_image *out) {
    memset(out, 0, sizeof *out);
    if (!stream->canvas) return final ? WI_ERR_TRUNCATED : WI_NEED_MORE;
    if (final && !stream->finished) return WI_ERR_TRUNCATED;
    if (!final) {
        if (!stream->new_pass) return WI_NEED_MORE;
        if (JxlDecoderFlushImage(stream->decoder) != JXL_DEC_SUCCESS) return WI_NEED_MORE;
        stream->new_pass = 0;
    }
    uint8_t *pixels = wi_alloc_bytes(stream->canvas_size, 0);
    if (!pixels) return WI_ERR_NO_MEMORY;
    memcpy(pixels, stream->canvas, stream->canvas_size);
    out->pixels = pixels;
    out->width = stream->info.width;
    out->height = stream->info.height;
    out->rows_decoded = stream->info.height;
    return WI_OK;
}

const char *wi_jxl_stream_message(const wi_jxl_stream *stream) { return stream->message; }

size_t wi_jxl_stream_pending(const wi_jxl_stream *stream) { return stream->pending_length; }

void wi_jxl_stream_destroy(wi_jxl_stream *stream) {
    if (!stream) return;
    if (stream->decoder) JxlDecoderDestroy(stream->decoder);
    free(stream->pending);
    free(stream->canvas);
    free(stream->icc);
    free(stream);
}

// ---- Encoding

struct wi_jxl_encoder {
    JxlEncoder *encoder;
    JxlEncoderFrameSettings *settings;
    uint32_t width, height;
    int animated, has_alpha;
    int deep;             // 16-bit samples (bits_per_sample 16)
};

/// cjxl's mapping of a 0...100 quality to a Butteraugli distance.
static float distance_for(int quality) {
    if (quality >= 100) return 0.0f;
    if (quality >= 30) return 0.1f + (float)(100 - quality) * 0.09f;
    float d = 6.4f;
    float p = 1.0f;
    for (int i = 0; i < 30 - quality; i++) p *= 1.2011244f;   // 2.5^(1/5) per step
    return d + p / 6.25f;
}

wi_jxl_encoder *wi_jxl_encoder_create(uint32_t width, uint32_t height, int has_alpha, int deep, int animated, uint32_t loop_count,
                                      int quality, int lossless, int effort, const uint8_t *icc, size_t icc_length,
                                      int primaries, int transfer, char message[WI_MESSAGE_SIZE]) {
    wi_jxl_encoder *e = calloc(1, sizeof *e);
    if (!e || !(e->encoder = JxlEncoderCreate(NULL))) {
        free(e);
        wi_say(message, "out of memory");
        return NULL;
    }
    if (quality >= 100) lossless = 1;   // cjxl's rule: quality 100 is distance 0, lossless
    e->width = width;
    e->height = height;
    e->animated = animated;
    e->has_alpha = has_alpha;
    e->deep = deep;
    JxlBasicInfo basic;
    JxlEncoderInitBasicInfo(&basic);
    basic.xsize = width;
    basic.ysize = height;
    basic.bits_per_sample = deep ? 16 : 8;
    basic.num_color_channels = 3;
    basic.num_extra_channels = has_alpha ? 1 : 0;
    basic.alpha_bits = has_alpha ? basic.bits_per_sample : 0;
    basic.uses_original_profile = lossless ? JXL_TRUE : JXL_FALSE;
    if (animated) {
        basic.have_animation = JXL_TRUE;
        basic.animation.tps_numerator = 1000;
        basic.animation.tps_denominator = 1;
        basic.animation.num_loops = loop_count;
    }
    int ok = JxlEncoderSetBasicInfo(e->encoder, &basic) == JXL_ENC_SUCCESS;
    if (ok && icc && icc_length) {
        ok = JxlEncoderSetICCProfile(e->encoder, icc, icc_length) == JXL_ENC_SUCCESS;
    } else if (ok) {
        JxlColorEncoding color;
        JxlColorEncodingSetToSRGB(&color, JXL_FALSE);
        // An HDR image's code points: its primaries with the PQ or HLG transfer function.
        if ((transfer == 16 || transfer == 18) && (primaries == 1 || primaries == 9 || primaries == 12)) {
            color.primaries = primaries == 9 ? JXL_PRIMARIES_2100 : primaries == 12 ? JXL_PRIMARIES_P3 : JXL_PRIMARIES_SRGB;
            color.transfer_function = transfer == 16 ? JXL_TRANSFER_FUNCTION_PQ : JXL_TRANSFER_FUNCTION_HLG;
            color.rendering_intent = JXL_RENDERING_INTENT_RELATIVE;
        }
        ok = JxlEncoderSetColorEncoding(e->encoder, &color) == JXL_ENC_SUCCESS;
    }
    if (ok) ok = (e->settings = JxlEncoderFrameSettingsCreate(e->encoder, NULL)) != NULL;
    if (ok && lossless) ok = JxlEncoderSetFrameLossless(e->settings, JXL_TRUE) == JXL_ENC_SUCCESS;
    if (ok && !lossless) ok = JxlEncoderSetFrameDistance(e->settings, distance_for(quality)) == JXL_ENC_SUCCESS;
    if (ok && effort > 0) ok = JxlEncoderFrameSettingsSetOption(e->settings, JXL_ENC_FRAME_SETTING_EFFORT, effort) == JXL_ENC_SUCCESS;
    if (!ok) {
        wi_say(message, "libjxl refused the settings (error %d)", (int)JxlEncoderGetError(e->encoder));
        wi_jxl_encoder_destroy(e);
        return NULL;
    }
    return e;
}

int wi_jxl_encoder_set_metadata(wi_jxl_encoder *e, const uint8_t *exif, size_t exif_length,
                                const uint8_t *xmp, size_t xmp_length) {
    if (!exif_length && !xmp_length) return WI_OK;
    if (JxlEncoderUseContainer(e->encoder, JXL_TRUE) != JXL_ENC_SUCCESS || JxlEncoderUseBoxes(e->encoder) != JXL_ENC_SUCCESS) {
        return WI_ERR_ARGUMENT;
    }
    if (exif_length) {
        // The box's contents start with the offset of the TIFF header: 0, it follows at once.
        uint8_t *box = malloc(exif_length + 4);
        if (!box) return WI_ERR_NO_MEMORY;
        memset(box, 0, 4);
        memcpy(box + 4, exif, exif_length);
        JxlEncoderStatus status = JxlEncoderAddBox(e->encoder, "Exif", box, exif_length + 4, JXL_FALSE);
        free(box);
        if (status != JXL_ENC_SUCCESS) return WI_ERR_ARGUMENT;
    }
    if (xmp_length && JxlEncoderAddBox(e->encoder, "xml ", xmp, xmp_length, JXL_FALSE) != JXL_ENC_SUCCESS) return WI_ERR_ARGUMENT;
    return WI_OK;
}

int wi_jxl_encoder_add(wi_jxl_encoder *e, const uint8_t *rgba, uint32_t duration_ms) {
    if (e->animated) {
        JxlFrameHeader header;
        JxlEncoderInitFrameHeader(&header);
        header.duration = duration_ms;
        if (JxlEncoderSetFrameHeader(e->settings, &header) != JXL_ENC_SUCCESS) return WI_ERR_ARGUMENT;
    }
    size_t count = (size_t)e->width * e->height, sample = e->deep ? 2 : 1;
    JxlDataType type = e->deep ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8;
    if (e->has_alpha) {
        JxlPixelFormat format = { 4, type, JXL_NATIVE_ENDIAN, 0 };
        return JxlEncoderAddImageFrame(e->settings, &format, rgba, count * 4 * sample) == JXL_ENC_SUCCESS ? WI_OK : WI_ERR_ARGUMENT;
    }
    // An opaque image goes in as RGB (libjxl takes four channels only with an alpha channel).
    uint8_t *rgb = malloc(count * 3 * sample ? count * 3 * sample : 1);
    if (!rgb) return WI_ERR_NO_MEMORY;
    for (size_t i = 0; i < count; i++) memcpy(rgb + 3 * sample * i, rgba + 4 * sample * i, 3 * sample);
    JxlPixelFormat format = { 3, type, JXL_NATIVE_ENDIAN, 0 };
    int status = JxlEncoderAddImageFrame(e->settings, &format, rgb, count * 3 * sample) == JXL_ENC_SUCCESS ? WI_OK : WI_ERR_ARGUMENT;
    free(rgb);
    return status;
}

int wi_jxl_encoder_finish(wi_jxl_encoder *e, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    JxlEncoderCloseInput(e->encoder);
    size_t capacity = 64 << 10;
    out->data = malloc(capacity);
    if (!out->data) return WI_ERR_NO_MEMORY;
    for (;;) {
        uint8_t *next = out->data + out->size;
        size_t available = capacity - out->size;
        JxlEncoderStatus status = JxlEncoderProcessOutput(e->encoder, &next, &available);
        out->size = (size_t)(next - out->data);
        if (status == JXL_ENC_SUCCESS) break;
        if (status != JXL_ENC_NEED_MORE_OUTPUT) {
            wi_say(out->message, "libjxl could not encode the image (error %d)", (int)JxlEncoderGetError(e->encoder));
            free(out->data);
            out->data = NULL;
            out->size = 0;
            return WI_ERR_ARGUMENT;
        }
        capacity *= 2;
        uint8_t *grown = realloc(out->data, capacity);
        if (!grown) {
            free(out->data);
            out->data = NULL;
            out->size = 0;
            return WI_ERR_NO_MEMORY;
        }
        out->data = grown;
    }
    out->capacity = capacity;
    return WI_OK;
}

void wi_jxl_encoder_destroy(wi_jxl_encoder *e) {
    if (!e) return;
    if (e->encoder) JxlEncoderDestroy(e->encoder);
    free(e);
}

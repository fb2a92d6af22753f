#include "wi_avif.h"
#include <avif/avif.h>
#include <stdlib.h>
#include <string.h>

struct wi_avif {
    avifDecoder *decoder;
    uint8_t *data;               // the decoder reads from this copy
    avifCropRect crop;
    int cropped;
    uint32_t width, height;      // the coded size the container declared: every frame must have it
};

static int status_of(avifResult result) {
    switch (result) {
    case AVIF_RESULT_OK: return WI_OK;
    case AVIF_RESULT_TRUNCATED_DATA: return WI_ERR_TRUNCATED;
    case AVIF_RESULT_OUT_OF_MEMORY: return WI_ERR_NO_MEMORY;
    case AVIF_RESULT_NO_CODEC_AVAILABLE: return WI_ERR_UNSUPPORTED;
    default: return WI_ERR_CORRUPT;
    }
}

static void describe(char *message, avifResult result, const avifDiagnostics *diag) {
    if (diag && diag->error[0]) wi_say(message, "%s (%s)", avifResultToString(result), diag->error);
    else wi_say(message, "%s", avifResultToString(result));
}

wi_avif *wi_avif_open(const uint8_t *data, size_t length, uint64_t max_pixels, wi_avif_info *info, int *status) {
    memset(info, 0, sizeof *info);
    info->mirror = -1;
    wi_avif *avif = calloc(1, sizeof *avif);
    if (!avif || !(avif->data = malloc(length ? length : 1))) {
        free(avif);
        *status = WI_ERR_NO_MEMORY;
        return NULL;
    }
    memcpy(avif->data, data, length);
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) {
        free(avif->data);
        free(avif);
        *status = WI_ERR_NO_MEMORY;
        return NULL;
    }
    avif->decoder = decoder;
    decoder->maxThreads = 1;
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    // libavif's own bound, besides ours below (it checks the grid's cells and sequences too).
    uint64_t cap = max_pixels ? max_pixels : (uint64_t)16384 * 16384;
    decoder->imageSizeLimit = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
    decoder->imageDimensionLimit = 65535;
    avifResult result = avifDecoderSetIOMemory(decoder, avif->data, length);
    if (result == AVIF_RESULT_OK) result = avifDecoderParse(decoder);
    if (result != AVIF_RESULT_OK) {
        *status = status_of(result);
        describe(info->message, result, &decoder->diag);
        if (strstr(info->message, "imageSizeLimit") || strstr(info->message, "dimension")) *status = WI_ERR_TOO_LARGE;
        wi_avif_close(avif);
        return NULL;
    }
    const avifImage *image = decoder->image;
    info->coded_width = image->width;
    info->coded_height = image->height;
    if (image->width == 0 || image->height == 0) {
        wi_say(info->message, "zero image dimension");
        *status = WI_ERR_CORRUPT;
        wi_avif_close(avif);
        return NULL;
    }
    if (max_pixels && (uint64_t)image->width * image->height > max_pixels) {
        wi_say(info->message, "%ux%u is over the pixel limit", image->width, image->height);
        *status = WI_ERR_TOO_LARGE;
        wi_avif_close(avif);
        return NULL;
    }
    info->width = avif->width = image->width;
    info->height = avif->height = image->height;
    if (image->transformFlags & AVIF_TRANSFORM_CLAP) {
        avifDiagnostics diag;
        avifDiagnosticsClearError(&diag);
        // An invalid clean aperture is ignored, as browsers ignore it.
        if (avifCropRectConvertCleanApertureBox(&avif->crop, &image->clap, image->width, image->height, image->yuvFormat, &diag)
            && avif->crop.width > 0 && avif->crop.height > 0) {
            avif->cropped = 1;
            info->width = avif->crop.width;
            info->height = avif->crop.height;
        }
    }
    if (image->transformFlags & AVIF_TRANSFORM_IROT) info->rotation = image->irot.angle & 3;
    if (image->transformFlags & AVIF_TRANSFORM_IMIR) info->mirror = image->imir.mode ? 1 : 0;
    info->frame_count = decoder->imageCount > 0 ? (uint32_t)decoder->imageCount : 1;
    info->depth = image->depth;
    info->has_alpha = decoder->alphaPresent ? 1 : 0;
    info->alpha_premultiplied = image->alphaPremultiplied ? 1 : 0;
    info->is_sequence = decoder->imageCount > 1;
    info->color_primaries = image->colorPrimaries;
    info->transfer_characteristics = image->transferCharacteristics;
    info->matrix_coefficients = image->matrixCoefficients;
    info->full_range = image->yuvRange == AVIF_RANGE_FULL;
    *status = WI_OK;
    return avif;
}

double wi_avif_frame_duration(const wi_avif *avif, uint32_t index) {
    if (avif->decoder->imageCount <= 1) return 0;
    avifImageTiming timing;
    if (avifDecoderNthImageTiming(avif->decoder, index, &timing) != AVIF_RESULT_OK) return 0;
    return timing.duration;
}

int wi_avif_render(wi_avif *avif, uint32_t index, wi_image *out) { return wi_avif_render_at(avif, index, 0, out); }

int wi_avif_render_at(wi_avif *avif, uint32_t index, int deep, wi_image *out) {
    memset(out, 0, sizeof *out);
    avifDecoder *decoder = avif->decoder;
    avifResult result = avifDecoderNthImage(decoder, index);
    if (result != AVIF_RESULT_OK) {
        describe(out->message, result, &decoder->diag);
        return status_of(result);
    }
    const avifImage *image = decoder->image;
    // Every frame of a sequence must have the size the container declared (libavif lets a later
    // frame change it; the callers size their canvases from the declared one).
    if (image->width != avif->width || image->height != avif->height) {
        wi_say(out->message, "frame %u is %ux%u, not the declared %ux%u", index, image->width, image->height, avif->width, avif->height);
        return WI_ERR_CORRUPT;
    }
    uint32_t width = avif->cropped ? avif->crop.width : image->width;
    uint32_t height = avif->cropped ? avif->crop.height : image->height;
    avifImage view;
    memset(&view, 0, sizeof view);
    const avifImage *source = image;
    if (avif->cropped) {
        if (avif->crop.x + (uint64_t)avif->crop.width > image->width || avif->crop.y + (uint64_t)avif->crop.height > image->height) {
            wi_say(out->message, "a frame is smaller than the clean aperture");
            return WI_ERR_CORRUPT;
        }
        result = avifImageSetViewRect(&view, image, &avif->crop);
        if (result != AVIF_RESULT_OK) {
            describe(out->message, result, NULL);
            return status_of(result);
        }
        source = &view;
    }
    // At depth only when there is depth to keep: an 8-bit AVIF is RGBA8 either way.
    deep = deep && source->depth > 8;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, source);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = deep ? 16 : 8;             // libavif scales the coded 10 or 12 bits to 16
    rgb.alphaPremultiplied = AVIF_FALSE;   // libavif un-premultiplies a premultiplied image
    rgb.chromaUpsampling = AVIF_CHROMA_UPSAMPLING_BILINEAR;
    rgb.rowBytes = width * (deep ? 8 : 4);
    rgb.pixels = deep ? wi_alloc_bytes((size_t)width * height * 8, 0) : wi_alloc_pixels(width, height, 0);
    if (!rgb.pixels) return WI_ERR_NO_MEMORY;
    if (rgb.width != width || rgb.height != height) {
        free(rgb.pixels);
        wi_say(out->message, "frame %u is %ux%u, not the declared %ux%u", index, rgb.width, rgb.height, width, height);
        return WI_ERR_CORRUPT;
    }
    result = avifImageYUVToRGB(source, &rgb);
    if (result != AVIF_RESULT_OK) {
        free(rgb.pixels);
        describe(out->message, result, NULL);
        return status_of(result);
    }
    // Without an alpha plane libavif fills A with its maximum itself.
    out->pixels = rgb.pixels;
    out->deep = deep ? 1 : 0;
    out->width = width;
    out->height = height;
    out->rows_decoded = height;
    return WI_OK;
}

size_t wi_avif_icc(const wi_avif *avif, const uint8_t **bytes) {
    const avifRWData *icc = &avif->decoder->image->icc;
    *bytes = icc->data;
    return icc->size;
}

void wi_avif_close(wi_avif *avif) {
    if (!avif) return;
    if (avif->decoder) avifDecoderDestroy(avif->decoder);
    free(avif->data);
    free(avif);
}

// ---- Encoding

struct wi_avif_encoder {
    avifEncoder *encoder;
    int lossless;
    int has_alpha;
    int primaries, transfer;   // CICP written in the nclx box (sRGB's by default)
    int deep_bits;             // bits a sample of 16-bit frames are coded in (10 or 12)
    avifRWData icc;
    avifRWData exif;
    avifRWData xmp;
};

int wi_avif_can_encode(void) {
    return avifCodecName(AVIF_CODEC_CHOICE_AUTO, AVIF_CODEC_FLAG_CAN_ENCODE) != NULL;
}

wi_avif_encoder *wi_avif_encoder_create(int quality, int lossless, int speed, int has_alpha) {
    wi_avif_encoder *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->encoder = avifEncoderCreate();
    if (!e->encoder) {
        free(e);
        return NULL;
    }
    if (quality < 0) quality = 0;
    if (quality > 100) quality = 100;
    // libavif 1.x's own mapping of quality to the AV1 quantizer.
    int quantizer = lossless ? AVIF_QUANTIZER_LOSSLESS : ((100 - quality) * 63 + 50) / 100;
    e->encoder->minQuantizer = e->encoder->maxQuantizer = quantizer;
    e->encoder->minQuantizerAlpha = e->encoder->maxQuantizerAlpha = quantizer;
    e->encoder->speed = speed < 0 ? AVIF_SPEED_DEFAULT : (speed > 10 ? 10 : speed);
    e->encoder->maxThreads = 1;
    e->encoder->timescale = 1000;
    e->lossless = lossless;
    e->has_alpha = has_alpha;
    e->primaries = AVIF_COLOR_PRIMARIES_BT709;
    e->transfer = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    e->deep_bits = 10;
    return e;
}

int wi_avif_encoder_set_icc(wi_avif_encoder *encoder, const uint8_t *icc, size_t length) {
    avifRWDataFree(&encoder->icc);
    if (length) avifRWDataSet(&encoder->icc, icc, length);
    return WI_OK;
}

int wi_avif_encoder_set_cicp(wi_avif_encoder *encoder, int primaries, int transfer) {
    if (primaries < 0 || primaries > 255 || transfer < 0 || transfer > 255) return WI_ERR_ARGUMENT;
    encoder->primaries = primaries;
    encoder->transfer = transfer;
    return WI_OK;
}

int wi_avif_encoder_set_depth(wi_avif_encoder *encoder, int bits) {
    if (bits != 10 && bits != 12) return WI_ERR_ARGUMENT;
    encoder->deep_bits = bits;
    return WI_OK;
}

int wi_avif_encoder_set_metadata(wi_avif_encoder *encoder, const uint8_t *exif, size_t exif_length,
                                 const uint8_t *xmp, size_t xmp_length) {
    avifRWDataFree(&encoder->exif);
    avifRWDataFree(&encoder->xmp);
    if (exif_length) avifRWDataSet(&encoder->exif, exif, exif_length);
    if (xmp_length) avifRWDataSet(&encoder->xmp, xmp, xmp_length);
    return WI_OK;
}

static int add(wi_avif_encoder *e, const uint8_t *rgba, int deep, uint32_t width, uint32_t height,
               uint32_t duration_ms, int single, char message[WI_MESSAGE_SIZE]) {
    // 16-bit pixels are coded in 10 bits (AV1's main profile) or 12, libavif scaling them.
    avifImage *image = avifImageCreate(width, height, deep ? (uint32_t)e->deep_bits : 8, e->lossless ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420);
    if (!image) return WI_ERR_NO_MEMORY;
    image->colorPrimaries = (avifColorPrimaries)e->primaries;
    image->transferCharacteristics = (avifTransferCharacteristics)e->transfer;
    image->matrixCoefficients = e->lossless ? AVIF_MATRIX_COEFFICIENTS_IDENTITY : AVIF_MATRIX_COEFFICIENTS_BT601;
    image->yuvRange = AVIF_RANGE_FULL;
    if (e->icc.size) avifImageSetProfileICC(image, e->icc.data, e->icc.size);
    if (e->exif.size) avifImageSetMetadataExif(image, e->exif.data, e->exif.size);
    if (e->xmp.size) avifImageSetMetadataXMP(image, e->xmp.data, e->xmp.size);
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = deep ? 16 : 8;
    rgb.ignoreAlpha = e->has_alpha ? AVIF_FALSE : AVIF_TRUE;
    rgb.pixels = (uint8_t *)rgba;
    rgb.rowBytes = width * (deep ? 8 : 4);
    avifResult result = avifImageRGBToYUV(image, &rgb);
    if (result == AVIF_RESULT_OK) {
        result = avifEncoderAddImage(e->encoder, image, duration_ms ? duration_ms : 1,
                                     single ? AVIF_ADD_IMAGE_FLAG_SINGLE : AVIF_ADD_IMAGE_FLAG_NONE);
    }
    avifImageDestroy(image);
    if (result != AVIF_RESULT_OK) {
        describe(message, result, &e->encoder->diag);
        return result == AVIF_RESULT_NO_CODEC_AVAILABLE ? WI_ERR_UNSUPPORTED : WI_ERR_ARGUMENT;
    }
    return WI_OK;
}

int wi_avif_encoder_add(wi_avif_encoder *e, const uint8_t *rgba, uint32_t width, uint32_t height,
                        uint32_t duration_ms, int single, char message[WI_MESSAGE_SIZE]) {
    return add(e, rgba, 0, width, height, duration_ms, single, message);
}

int wi_avif_encoder_add_16(wi_avif_encoder *e, const uint16_t *rgba, uint32_t width, uint32_t height,
                           uint32_t duration_ms, int single, char message[WI_MESSAGE_SIZE]) {
    return add(e, (const uint8_t *)rgba, 1, width, height, duration_ms, single, message);
}

int wi_avif_encoder_finish(wi_avif_encoder *e, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    avifRWData output = AVIF_DATA_EMPTY;
    avifResult result = avifEncoderFinish(e->encoder, &output);
    if (result != AVIF_RESULT_OK) {
        describe(out->message, result, &e->encoder->diag);
        avifRWDataFree(&output);
        return WI_ERR_ARGUMENT;
    }
    out->data = malloc(output.size ? output.size : 1);
    if (!out->data) {
        avifRWDataFree(&output);
        return WI_ERR_NO_MEMORY;
    }
    memcpy(out->data, output.data, output.size);
    out->size = out->capacity = output.size;
    avifRWDataFree(&output);
    return WI_OK;
}

void wi_avif_encoder_destroy(wi_avif_encoder *e) {
    if (!e) return;
    if (e->encoder) avifEncoderDestroy(e->encoder);
    avifRWDataFree(&e->icc);
    avifRWDataFree(&e->exif);
    avifRWDataFree(&e->xmp);
    free(e);
}

#include "raw_modern.h"
#include <avif/avif.h>
#include <jxl/decode.h>
#include <jxl/encode.h>
#include <libheif/heif.h>
#include <stdlib.h>
#include <string.h>

int raw_avif_decode(const uint8_t *data, size_t length) { return raw_avif_decode_depth(data, length, 8); }

int raw_avif_decode_depth(const uint8_t *data, size_t length, int depth) {
    avifDecoder *decoder = avifDecoderCreate();
    decoder->maxThreads = 1;
    decoder->ignoreExif = decoder->ignoreXMP = AVIF_TRUE;
    int status = 1;
    if (avifDecoderSetIOMemory(decoder, data, length) == AVIF_RESULT_OK && avifDecoderParse(decoder) == AVIF_RESULT_OK
        && avifDecoderNextImage(decoder) == AVIF_RESULT_OK) {
        avifRGBImage rgb;
        avifRGBImageSetDefaults(&rgb, decoder->image);
        rgb.format = AVIF_RGB_FORMAT_RGBA;
        rgb.depth = (uint32_t)depth;
        rgb.chromaUpsampling = AVIF_CHROMA_UPSAMPLING_BILINEAR;
        avifRGBImageAllocatePixels(&rgb);
        status = avifImageYUVToRGB(decoder->image, &rgb) == AVIF_RESULT_OK ? 0 : 1;
        avifRGBImageFreePixels(&rgb);
    }
    avifDecoderDestroy(decoder);
    return status;
}

int raw_heif_decode(const uint8_t *data, size_t length) { return raw_heif_decode_depth(data, length, 8); }

int raw_heif_decode_depth(const uint8_t *data, size_t length, int depth) {
    int deep = depth > 8;
    size_t pixel = deep ? 8 : 4;
    struct heif_context *context = heif_context_alloc();
    struct heif_image_handle *handle = NULL;
    struct heif_image *image = NULL;
    int status = 1;
    heif_context_set_max_decoding_threads(context, 0);
    if (heif_context_read_from_memory_without_copy(context, data, length, NULL).code == heif_error_Ok
        && heif_context_get_primary_image_handle(context, &handle).code == heif_error_Ok
        && heif_decode_image(handle, &image, heif_colorspace_RGB, deep ? heif_chroma_interleaved_RRGGBBAA_LE : heif_chroma_interleaved_RGBA,
                             NULL).code == heif_error_Ok) {
        int stride = 0;
        const uint8_t *plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
        int width = heif_image_get_primary_width(image), height = heif_image_get_primary_height(image);
        uint8_t *copy = malloc((size_t)width * height * pixel);
        // The copy out of libheif's image, as any caller that keeps the pixels makes (the coded
        // values as they are: no widening to 16 bits).
        for (int y = 0; plane && copy && y < height; y++) memcpy(copy + (size_t)y * width * pixel, plane + (size_t)y * stride, (size_t)width * pixel);
        status = plane && copy ? 0 : 1;
        free(copy);
    }
    heif_image_release(image);
    heif_image_handle_release(handle);
    heif_context_free(context);
    return status;
}

int raw_jxl_decode(const uint8_t *data, size_t length) { return raw_jxl_decode_depth(data, length, 8); }

int raw_jxl_decode_depth(const uint8_t *data, size_t length, int depth) {
    JxlDecoder *decoder = JxlDecoderCreate(NULL);
    JxlPixelFormat format = { 4, depth > 8 ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0 };
    JxlBasicInfo info;
    uint8_t *pixels = NULL;
    int status = 1;
    JxlDecoderSubscribeEvents(decoder, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE);
    JxlDecoderSetInput(decoder, data, length);
    JxlDecoderCloseInput(decoder);
    for (;;) {
        JxlDecoderStatus event = JxlDecoderProcessInput(decoder);
        if (event == JXL_DEC_BASIC_INFO) {
            JxlDecoderGetBasicInfo(decoder, &info);
        } else if (event == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t size = 0;
            JxlDecoderImageOutBufferSize(decoder, &format, &size);
            pixels = malloc(size);
            JxlDecoderSetImageOutBuffer(decoder, &format, pixels, size);
        } else if (event == JXL_DEC_FULL_IMAGE) {
            status = 0;
            break;
        } else {
            break;
        }
    }
    free(pixels);
    JxlDecoderDestroy(decoder);
    return status;
}

int raw_avif_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int quality, int speed, size_t *size) {
    avifImage *image = avifImageCreate(width, height, 8, AVIF_PIXEL_FORMAT_YUV420);
    image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    image->yuvRange = AVIF_RANGE_FULL;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = 8;
    rgb.ignoreAlpha = AVIF_TRUE;
    rgb.pixels = (uint8_t *)rgba;
    rgb.rowBytes = width * 4;
    avifEncoder *encoder = avifEncoderCreate();
    int quantizer = ((100 - quality) * 63 + 50) / 100;
    encoder->minQuantizer = encoder->maxQuantizer = quantizer;
    encoder->speed = speed;
    encoder->maxThreads = 1;
    avifRWData output = AVIF_DATA_EMPTY;
    int status = avifImageRGBToYUV(image, &rgb) == AVIF_RESULT_OK && avifEncoderWrite(encoder, image, &output) == AVIF_RESULT_OK ? 0 : 1;
    *size = output.size;
    avifRWDataFree(&output);
    avifEncoderDestroy(encoder);
    avifImageDestroy(image);
    return status;
}

int raw_jxl_encode(const uint8_t *rgba, uint32_t width, uint32_t height, float distance, int effort, size_t *size) {
    JxlEncoder *encoder = JxlEncoderCreate(NULL);
    JxlBasicInfo info;
    JxlEncoderInitBasicInfo(&info);
    info.xsize = width;
    info.ysize = height;
    info.bits_per_sample = 8;
    info.num_color_channels = 3;
    info.uses_original_profile = JXL_FALSE;
    JxlEncoderSetBasicInfo(encoder, &info);
    JxlColorEncoding color;
    JxlColorEncodingSetToSRGB(&color, JXL_FALSE);
    JxlEncoderSetColorEncoding(encoder, &color);
    JxlEncoderFrameSettings *settings = JxlEncoderFrameSettingsCreate(encoder, NULL);
    JxlEncoderSetFrameDistance(settings, distance);
    JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, effort);
    // An opaque image goes in as RGB, as the plug-in gives it.
    size_t count = (size_t)width * height;
    uint8_t *rgb = malloc(count * 3);
    for (size_t i = 0; i < count; i++) memcpy(rgb + 3 * i, rgba + 4 * i, 3);
    JxlPixelFormat format = { 3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0 };
    int status = JxlEncoderAddImageFrame(settings, &format, rgb, count * 3) == JXL_ENC_SUCCESS ? 0 : 1;
    free(rgb);
    JxlEncoderCloseInput(encoder);
    size_t capacity = 1 << 20, used = 0;
    uint8_t *out = malloc(capacity);
    while (status == 0) {
        uint8_t *next = out + used;
        size_t available = capacity - used;
        JxlEncoderStatus result = JxlEncoderProcessOutput(encoder, &next, &available);
        used = (size_t)(next - out);
        if (result == JXL_ENC_SUCCESS) break;
        if (result != JXL_ENC_NEED_MORE_OUTPUT) { status = 1; break; }
        capacity *= 2;
        out = realloc(out, capacity);
    }
    *size = used;
    free(out);
    JxlEncoderDestroy(encoder);
    return status;
}

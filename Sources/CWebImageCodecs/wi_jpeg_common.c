#include "wi_jpeg_internal.h"
#include <string.h>

static void jpeg_error_exit_fn(j_common_ptr cinfo) {
    wi_jpeg_error *err = (wi_jpeg_error *)cinfo->err;
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    wi_set_message(err->message, text);
    longjmp(err->jump, 1);
}

static void jpeg_emit_message_fn(j_common_ptr cinfo, int level) {
    wi_jpeg_error *err = (wi_jpeg_error *)cinfo->err;
    if (level >= 0) return; // trace messages
    if (err->base.msg_code == JWRN_JPEG_EOF) {
        if (!err->truncated) {
            err->truncated = 1;
            err->rows_at_truncation = cinfo->is_decompressor ? ((j_decompress_ptr)cinfo)->output_scanline : 0;
        }
        if (!err->tolerate_truncation) {
            wi_set_message(err->message, "premature end of JPEG data");
            longjmp(err->jump, 2);
        }
    }
    err->base.num_warnings++;
}

void wi_jpeg_setup_errors(wi_jpeg_error *err, int tolerate) {
    memset(err, 0, sizeof *err);
    jpeg_std_error(&err->base);
    err->base.error_exit = jpeg_error_exit_fn;
    err->base.emit_message = jpeg_emit_message_fn;
    err->tolerate_truncation = tolerate;
}

int wi_jpeg_too_many_scans(j_decompress_ptr cinfo, wi_jpeg_error *err) {
    if (cinfo->input_scan_number <= WI_JPEG_MAX_SCANS) return 0;
    snprintf(err->message, sizeof err->message, "more than %d scans", WI_JPEG_MAX_SCANS);
    return 1;
}

/// libjpeg calls this before each step of absorbing a multi-scan file (and each row read).
static void jpeg_scan_monitor(j_common_ptr common) {
    wi_jpeg_error *err = (wi_jpeg_error *)common->err;
    if (common->is_decompressor && wi_jpeg_too_many_scans((j_decompress_ptr)common, err)) longjmp(err->jump, 1);
}

void wi_jpeg_limit_scans(j_decompress_ptr cinfo, wi_jpeg_error *err) {
    memset(&err->progress, 0, sizeof err->progress);
    err->progress.progress_monitor = jpeg_scan_monitor;
    cinfo->progress = &err->progress;
}

static inline uint8_t mul255(uint32_t a, uint32_t b) {
    uint32_t v = a * b + 128;
    return (uint8_t)((v + (v >> 8)) >> 8);
}

void wi_jpeg_cmyk_rows(const uint8_t *cmyk, uint8_t *rgba, uint32_t width, uint32_t rows, int inverted) {
    for (uint32_t i = 0; i < rows; i++) {
        const uint8_t *src = cmyk + (size_t)i * width * 4;
        uint8_t *dst = rgba + (size_t)i * width * 4;
        for (uint32_t x = 0; x < width; x++, src += 4, dst += 4) {
            uint32_t c = src[0], m = src[1], ye = src[2], k = src[3];
            if (!inverted) { c = 255 - c; m = 255 - m; ye = 255 - ye; k = 255 - k; }
            dst[0] = mul255(c, k); dst[1] = mul255(m, k); dst[2] = mul255(ye, k); dst[3] = 255;
        }
    }
}

// What the JPEG files of this target share: the error manager (errors jump back to the
// caller's setjmp; a premature end is a warning or an error as asked) and CMYK conversion.
#ifndef WI_JPEG_INTERNAL_H
#define WI_JPEG_INTERNAL_H
#include "wi_internal.h"
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    int tolerate_truncation;
    int truncated;
    uint32_t rows_at_truncation;
    char message[WI_MESSAGE_SIZE];
} wi_jpeg_error;

void wi_jpeg_setup_errors(wi_jpeg_error *err, int tolerate);
/// Converts `rows` rows of libjpeg CMYK (Adobe-inverted when `inverted`) to opaque RGBA.
void wi_jpeg_cmyk_rows(const uint8_t *cmyk, uint8_t *rgba, uint32_t width, uint32_t rows, int inverted);
#endif

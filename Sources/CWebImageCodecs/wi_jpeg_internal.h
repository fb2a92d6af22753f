// What the JPEG files of this target share: the error manager (errors jump back to the
// caller's setjmp; a premature end is a warning or an error as asked) and CMYK conversion.
#ifndef WI_JPEG_INTERNAL_H
#define WI_JPEG_INTERNAL_H
#include "wi_internal.h"
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>

/// Progressive scans a file may have. Each scan walks every block of the image however few
/// bytes it holds, so a file of many tiny scans costs seconds per megabyte (libjpeg-turbo's own
/// fuzzers and tools cap scans at 500 for that reason); encoders write about 10.
#define WI_JPEG_MAX_SCANS 500

typedef struct {
    struct jpeg_error_mgr base;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    int tolerate_truncation;
    int truncated;
    uint32_t rows_at_truncation;
    char message[WI_MESSAGE_SIZE];
} wi_jpeg_error;

void wi_jpeg_setup_errors(wi_jpeg_error *err, int tolerate);
/// Fails the decompression (through `err`'s jump) once the file has more than
/// WI_JPEG_MAX_SCANS scans. Call after jpeg_create_decompress, which clears `progress`.
void wi_jpeg_limit_scans(j_decompress_ptr cinfo, wi_jpeg_error *err);
/// Whether the scan being read is over WI_JPEG_MAX_SCANS; sets the message when it is.
int wi_jpeg_too_many_scans(j_decompress_ptr cinfo, wi_jpeg_error *err);
/// A copy of a complete progressive Huffman-coded JPEG without the AC scans of the components
/// whose ids are `dc_ids` (those libjpeg decodes at DCT_scaled_size 1, which read only their DC
/// coefficient), for a decode with block smoothing off to the same pixels; NULL when nothing
/// qualifies: another frame type, a truncated or malformed file, more than WI_JPEG_MAX_SCANS
/// scans, no such AC scan, or a coefficient block smoothing reads left at reduced precision or
/// never sent (libjpeg would smooth the whole file's blocks).
uint8_t *wi_jpeg_without_ac_scans(const uint8_t *data, size_t length, const int *dc_ids, int dc_count,
                                  size_t *out_length);
/// Converts `rows` rows of libjpeg CMYK (Adobe-inverted when `inverted`) to opaque RGBA.
void wi_jpeg_cmyk_rows(const uint8_t *cmyk, uint8_t *rgba, uint32_t width, uint32_t rows, int inverted);
#endif

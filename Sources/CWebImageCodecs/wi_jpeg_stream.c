// A JPEG decoded as its bytes arrive, each byte decoded once (libjpeg's suspending data
// source). The stream keeps only the bytes libjpeg has not consumed yet.
//
// Single-scan (baseline) images decode row by row into the final pixel buffer as data comes:
// a preview is a copy of the rows so far, and the final image is that buffer.
// Multi-scan (progressive) images run in libjpeg's buffered-image mode: the input is absorbed
// into the coefficient buffer once; a preview is an output pass over the last completed scan,
// and the final image is one output pass after the end of the file.
#include "wi_jpeg_internal.h"
#include <stdlib.h>
#include <string.h>

enum { STAGE_HEADER, STAGE_CONFIGURE, STAGE_START, STAGE_DATA, STAGE_DONE, STAGE_FAILED };

struct wi_jpeg_stream {
    struct jpeg_decompress_struct cinfo;
    wi_jpeg_error err;
    struct jpeg_source_mgr source;
    uint8_t *buffer;          // bytes not consumed yet, from `source.next_input_byte`
    size_t capacity;
    size_t skip;              // bytes libjpeg asked to skip that have not arrived
    uint64_t max_pixels;
    int stage;
    int failure;              // the status a failed stream keeps returning
    int buffered;             // multi-scan: buffered-image mode
    int cmyk, inverted;
    uint32_t width, height;   // output size
    // Single scan: the final pixels, filled as rows arrive.
    uint8_t *pixels;
    uint8_t *cmyk_rows;
    // Multi-scan: scans completed, the scan last shown, and an output pass left to finish.
    int completed_scans;
    int shown_scan;
    uint32_t shown_rows;      // single scan: rows in the last preview
    int finish_pending;
    char message[WI_MESSAGE_SIZE];
};

static void source_init(j_decompress_ptr cinfo) { (void)cinfo; }
static boolean source_fill(j_decompress_ptr cinfo) { (void)cinfo; return FALSE; }   // suspend
static void source_term(j_decompress_ptr cinfo) { (void)cinfo; }

static void source_skip(j_decompress_ptr cinfo, long count) {
    wi_jpeg_stream *stream = (wi_jpeg_stream *)cinfo->client_data;
    if (count <= 0) return;
    if ((size_t)count <= stream->source.bytes_in_buffer) {
        stream->source.next_input_byte += count;
        stream->source.bytes_in_buffer -= (size_t)count;
    } else {
        stream->skip += (size_t)count - stream->source.bytes_in_buffer;
        stream->source.next_input_byte += stream->source.bytes_in_buffer;
        stream->source.bytes_in_buffer = 0;
    }
}

wi_jpeg_stream *wi_jpeg_stream_create(uint64_t max_pixels) {
    wi_jpeg_stream *stream = calloc(1, sizeof *stream);
    if (!stream) return NULL;
    wi_jpeg_setup_errors(&stream->err, 0);
    stream->cinfo.err = &stream->err.base;
    stream->max_pixels = max_pixels;
    if (setjmp(stream->err.jump)) {
        free(stream);
        return NULL;
    }
    jpeg_create_decompress(&stream->cinfo);
    wi_jpeg_limit_scans(&stream->cinfo, &stream->err);
    stream->cinfo.client_data = stream;
    stream->source.init_source = source_init;
    stream->source.fill_input_buffer = source_fill;
    stream->source.skip_input_data = source_skip;
    stream->source.resync_to_restart = jpeg_resync_to_restart;
    stream->source.term_source = source_term;
    stream->cinfo.src = &stream->source;
    return stream;
}

void wi_jpeg_stream_destroy(wi_jpeg_stream *stream) {
    if (!stream) return;
    jpeg_destroy_decompress(&stream->cinfo);
    free(stream->buffer);
    free(stream->pixels);
    free(stream->cmyk_rows);
    free(stream);
}

/// Keeps the unconsumed bytes and appends the new ones (after any pending skip).
static int add_bytes(wi_jpeg_stream *stream, const uint8_t *data, size_t length) {
    if (stream->skip) {
        size_t dropped = length < stream->skip ? length : stream->skip;
        stream->skip -= dropped;
        data += dropped;
        length -= dropped;
    }
    size_t kept = stream->source.bytes_in_buffer;
    if (kept && stream->source.next_input_byte != stream->buffer)
        memmove(stream->buffer, stream->source.next_input_byte, kept);
    if (kept + length > stream->capacity) {
        size_t capacity = stream->capacity ? stream->capacity : 16384;
        while (capacity < kept + length) capacity *= 2;
        uint8_t *grown = realloc(stream->buffer, capacity);
        if (!grown) return WI_ERR_NO_MEMORY;
        stream->buffer = grown;
        stream->capacity = capacity;
    }
    if (length) memcpy(stream->buffer + kept, data, length);
    stream->source.next_input_byte = stream->buffer;
    stream->source.bytes_in_buffer = kept + length;
    return WI_OK;
}

/// Single scan: reads every row the data so far gives into the final buffer.
static void read_rows(wi_jpeg_stream *stream) {
    j_decompress_ptr cinfo = &stream->cinfo;
    JSAMPROW rows[16];
    while (cinfo->output_scanline < stream->height) {
        uint32_t y = cinfo->output_scanline, w = stream->width;
        uint32_t count = stream->height - y < 16 ? stream->height - y : 16;
        for (uint32_t i = 0; i < count; i++)
            rows[i] = stream->cmyk ? stream->cmyk_rows + (size_t)i * w * 4 : stream->pixels + (size_t)(y + i) * w * 4;
        JDIMENSION got = jpeg_read_scanlines(cinfo, rows, count);
        if (stream->cmyk) wi_jpeg_cmyk_rows(stream->cmyk_rows, stream->pixels + (size_t)y * w * 4, w, got, stream->inverted);
        if (got == 0) return;   // suspended: wait for more data
    }
}

/// Decodes as far as the data goes; returns WI_NEED_MORE, WI_HEADER (call configure), WI_OK
/// (complete) or an error.
static int advance(wi_jpeg_stream *stream) {
    j_decompress_ptr cinfo = &stream->cinfo;
    for (;;) {
        switch (stream->stage) {
        case STAGE_HEADER:
            if (jpeg_read_header(cinfo, TRUE) == JPEG_SUSPENDED) return WI_NEED_MORE;
            if ((uint64_t)cinfo->image_width * cinfo->image_height > stream->max_pixels) {
                wi_set_message(stream->message, "image dimensions over the decode limit");
                return WI_ERR_TOO_LARGE;
            }
            if (cinfo->image_width == 0 || cinfo->image_height == 0) {
                wi_set_message(stream->message, "zero image dimension");
                return WI_ERR_CORRUPT;
            }
            stream->stage = STAGE_CONFIGURE;
            return WI_HEADER;
        case STAGE_CONFIGURE:
            return WI_HEADER;
        case STAGE_START:
            if (!jpeg_start_decompress(cinfo)) return WI_NEED_MORE;
            stream->width = cinfo->output_width;
            stream->height = cinfo->output_height;
            if (!stream->buffered) {
                stream->pixels = wi_alloc_pixels(stream->width, stream->height, 1);
                if (stream->cmyk) stream->cmyk_rows = malloc((size_t)stream->width * 4 * 16);
                if (!stream->pixels || (stream->cmyk && !stream->cmyk_rows)) {
                    wi_set_message(stream->message, "out of memory");
                    return WI_ERR_NO_MEMORY;
                }
            }
            stream->stage = STAGE_DATA;
            break;
        case STAGE_DATA:
            if (!stream->buffered) {
                read_rows(stream);
                if (cinfo->output_scanline < stream->height) return WI_NEED_MORE;
                // Every row is in; the end of the file must come too (as a whole-file decode requires).
                if (!jpeg_finish_decompress(cinfo)) return WI_NEED_MORE;
                stream->stage = STAGE_DONE;
                return WI_OK;
            }
            for (;;) {
                int status = jpeg_consume_input(cinfo);
                if (wi_jpeg_too_many_scans(cinfo, &stream->err)) {
                    wi_set_message(stream->message, stream->err.message);
                    return WI_ERR_CORRUPT;
                }
                if (status == JPEG_SUSPENDED) return WI_NEED_MORE;
                if (status == JPEG_SCAN_COMPLETED) stream->completed_scans = cinfo->input_scan_number;
                if (status == JPEG_REACHED_EOI) {
                    stream->completed_scans = cinfo->input_scan_number;
                    stream->stage = STAGE_DONE;
                    return WI_OK;
                }
            }
        case STAGE_DONE:
            return WI_OK;
        default:
            return stream->failure;
        }
    }
}

/// Runs `advance` with errors caught; a failure sticks.
static int advance_caught(wi_jpeg_stream *stream) {
    if (stream->stage == STAGE_FAILED) return stream->failure;
    if (setjmp(stream->err.jump)) {
        wi_set_message(stream->message, stream->err.message);
        stream->failure = WI_ERR_CORRUPT;
        stream->stage = STAGE_FAILED;
        return WI_ERR_CORRUPT;
    }
    int status = advance(stream);
    if (status < 0) {
        stream->failure = status;
        stream->stage = STAGE_FAILED;
    }
    return status;
}

int wi_jpeg_stream_append(wi_jpeg_stream *stream, const uint8_t *data, size_t length) {
    if (stream->stage == STAGE_FAILED) return stream->failure;
    if (add_bytes(stream, data, length) != WI_OK) {
        wi_set_message(stream->message, "out of memory");
        stream->failure = WI_ERR_NO_MEMORY;
        stream->stage = STAGE_FAILED;
        return WI_ERR_NO_MEMORY;
    }
    return advance_caught(stream);
}

const char *wi_jpeg_stream_message(const wi_jpeg_stream *stream) { return stream->message; }

int wi_jpeg_stream_header(wi_jpeg_stream *stream, wi_jpeg_info *info) {
    memset(info, 0, sizeof *info);
    if (stream->stage == STAGE_HEADER || stream->stage == STAGE_FAILED) return WI_NEED_MORE;
    info->width = stream->cinfo.image_width;
    info->height = stream->cinfo.image_height;
    info->components = stream->cinfo.num_components;
    info->color_space = stream->cinfo.jpeg_color_space;
    info->progressive = stream->cinfo.progressive_mode;
    return WI_OK;
}

int wi_jpeg_stream_configure(wi_jpeg_stream *stream, int scale_num) {
    if (stream->stage != STAGE_CONFIGURE) return WI_ERR_ARGUMENT;
    if (scale_num < 1 || scale_num > 8) return WI_ERR_ARGUMENT;
    j_decompress_ptr cinfo = &stream->cinfo;
    // libjpeg's arithmetic decoder cannot suspend: such a file is decoded whole by the caller.
    if (cinfo->arith_code) return WI_ERR_UNSUPPORTED;
    stream->cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
    stream->inverted = stream->cmyk && cinfo->saw_Adobe_marker;
    cinfo->out_color_space = stream->cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    cinfo->scale_num = (unsigned int)scale_num;
    cinfo->scale_denom = 8;
    stream->buffered = jpeg_has_multiple_scans(cinfo);
    cinfo->buffered_image = stream->buffered ? TRUE : FALSE;
    stream->stage = STAGE_START;
    return advance_caught(stream);
}

/// Multi-scan: one output pass over `scan` into a new buffer (the pass never waits for input:
/// the scan is complete).
static int output_pass(wi_jpeg_stream *stream, int scan, wi_image *out) {
    j_decompress_ptr cinfo = &stream->cinfo;
    if (stream->finish_pending) {
        if (!jpeg_finish_output(cinfo)) return WI_NEED_MORE;
        stream->finish_pending = 0;
    }
    uint32_t w = stream->width, h = stream->height;
    uint8_t *pixels = wi_alloc_pixels(w, h, 0);
    uint8_t *scratch = stream->cmyk ? malloc((size_t)w * 4 * 16) : NULL;
    if (!pixels || (stream->cmyk && !scratch)) {
        free(pixels);
        free(scratch);
        wi_set_message(out->message, "out of memory");
        return WI_ERR_NO_MEMORY;
    }
    // An error inside the pass must not leak the buffers: they are freed by the caller's handler.
    stream->pixels = pixels;
    stream->cmyk_rows = scratch;
    jpeg_start_output(cinfo, scan);
    JSAMPROW rows[16];
    while (cinfo->output_scanline < h) {
        uint32_t y = cinfo->output_scanline;
        uint32_t count = h - y < 16 ? h - y : 16;
        for (uint32_t i = 0; i < count; i++)
            rows[i] = stream->cmyk ? scratch + (size_t)i * w * 4 : pixels + (size_t)(y + i) * w * 4;
        JDIMENSION got = jpeg_read_scanlines(cinfo, rows, count);
        if (stream->cmyk) wi_jpeg_cmyk_rows(scratch, pixels + (size_t)y * w * 4, w, got, stream->inverted);
        if (got == 0) break;   // cannot happen for a complete scan; never spin
    }
    stream->pixels = NULL;
    stream->cmyk_rows = NULL;
    free(scratch);
    stream->finish_pending = 1;
    if (jpeg_finish_output(cinfo)) stream->finish_pending = 0;
    out->pixels = pixels;
    out->width = w;
    out->height = h;
    out->rows_decoded = h;
    out->scans = (uint32_t)scan;
    stream->shown_scan = scan;
    return WI_OK;
}

int wi_jpeg_stream_render(wi_jpeg_stream *stream, int final, wi_image *out) {
    memset(out, 0, sizeof *out);
    if (stream->stage == STAGE_FAILED) {
        wi_set_message(out->message, stream->message);
        return stream->failure;
    }
    if (stream->stage < STAGE_DATA) {
        if (final) { wi_set_message(out->message, "premature end of JPEG data"); return WI_ERR_TRUNCATED; }
        return WI_NEED_MORE;
    }
    if (final && stream->stage != STAGE_DONE) {
        wi_set_message(out->message, "premature end of JPEG data");
        return WI_ERR_TRUNCATED;
    }
    if (!stream->buffered) {
        uint32_t rows = stream->cinfo.output_scanline;
        if (final) {
            out->pixels = stream->pixels;   // the buffer itself: no copy
            stream->pixels = NULL;
        } else {
            if (rows == 0 || rows == stream->shown_rows) return WI_NEED_MORE;
            stream->shown_rows = rows;
            // Only the rows decoded are copied; the rest stay zero (transparent).
            out->pixels = wi_alloc_pixels(stream->width, stream->height, 1);
            if (!out->pixels) { wi_set_message(out->message, "out of memory"); return WI_ERR_NO_MEMORY; }
            memcpy(out->pixels, stream->pixels, (size_t)stream->width * rows * 4);
        }
        out->width = stream->width;
        out->height = stream->height;
        out->rows_decoded = final ? stream->height : rows;
        out->scans = 1;
        return out->pixels ? WI_OK : WI_ERR_ARGUMENT;
    }
    int scan = final ? stream->cinfo.input_scan_number : stream->completed_scans;
    if (scan < 1 || (!final && scan <= stream->shown_scan)) return WI_NEED_MORE;
    if (setjmp(stream->err.jump)) {
        free(stream->pixels);
        free(stream->cmyk_rows);
        stream->pixels = NULL;
        stream->cmyk_rows = NULL;
        wi_set_message(out->message, stream->err.message);
        wi_set_message(stream->message, stream->err.message);
        stream->failure = WI_ERR_CORRUPT;
        stream->stage = STAGE_FAILED;
        return WI_ERR_CORRUPT;
    }
    return output_pass(stream, scan, out);
}

#include "wi_jpeg_internal.h"
#include <stdlib.h>
#include <string.h>

int wi_jpeg_read_info(const uint8_t *data, size_t length, wi_jpeg_info *info) {
    memset(info, 0, sizeof *info);
    struct jpeg_decompress_struct cinfo;
    wi_jpeg_error err;
    wi_jpeg_setup_errors(&err, 0);
    cinfo.err = &err.base;
    if (setjmp(err.jump)) {
        wi_set_message(info->message, err.message);
        jpeg_destroy_decompress(&cinfo);
        return WI_ERR_CORRUPT;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)length);
    jpeg_read_header(&cinfo, TRUE);
    info->width = cinfo.image_width;
    info->height = cinfo.image_height;
    info->components = cinfo.num_components;
    info->color_space = cinfo.jpeg_color_space;
    info->progressive = cinfo.progressive_mode;
    jpeg_destroy_decompress(&cinfo);
    return WI_OK;
}

int wi_jpeg_decode(const uint8_t *data, size_t length, int scale_num, uint32_t reduce_width, uint32_t reduce_height,
                   uint32_t keep_top, uint32_t keep_rows, int tolerate, uint64_t max_pixels, int cmyk_inks,
                   const wi_color_transform *convert, wi_image *out) {
    memset(out, 0, sizeof *out);
    if (scale_num < 1 || scale_num > 8) return WI_ERR_ARGUMENT;
    if ((reduce_width == 0) != (reduce_height == 0)) return WI_ERR_ARGUMENT;
    if (keep_rows && (!reduce_height || keep_top > reduce_height || keep_rows > reduce_height - keep_top)) return WI_ERR_ARGUMENT;
    struct jpeg_decompress_struct cinfo;
    wi_jpeg_error err;
    wi_jpeg_setup_errors(&err, tolerate);
    cinfo.err = &err.base;
    uint8_t *volatile pixels = NULL;
    uint8_t *volatile dc_only = NULL;
    uint8_t *volatile cmyk_row = NULL;
    uint8_t *volatile strip = NULL;
    wi_area_stream *volatile reducing = NULL;
    wi_color_rows *volatile converting = NULL;
    volatile int status = WI_ERR_CORRUPT;
    if (setjmp(err.jump)) {
        wi_set_message(out->message, err.message);
        // The helper stops touching the pixels before they are freed.
        wi_color_rows_cancel(converting);
        jpeg_destroy_decompress(&cinfo);
        wi_area_stream_free(reducing);
        free(pixels);
        free(dc_only);
        free(cmyk_row);
        free(strip);
        return err.truncated ? WI_ERR_TRUNCATED : status;
    }
    jpeg_create_decompress(&cinfo);
    wi_jpeg_limit_scans(&cinfo, &err);
    jpeg_mem_src(&cinfo, data, (unsigned long)length);
    jpeg_read_header(&cinfo, TRUE);
    if ((uint64_t)cinfo.image_width * cinfo.image_height > max_pixels) {
        status = WI_ERR_TOO_LARGE;
        out->width = cinfo.image_width; out->height = cinfo.image_height;
        strcpy(err.message, "image dimensions over the decode limit");
        longjmp(err.jump, 1);
    }
    if (scale_num == 1 && cinfo.progressive_mode && !cinfo.arith_code && !tolerate) {
        // At 1/8 the components decoded one pixel a block read only their DC coefficients:
        // their AC scans (most of the file) are dropped instead of decoded.
        cinfo.scale_num = 1;
        cinfo.scale_denom = 8;
        jpeg_calc_output_dimensions(&cinfo);
        int dc_ids[MAX_COMPONENTS], dc_count = 0;
        for (int ci = 0; ci < cinfo.num_components && ci < MAX_COMPONENTS; ci++)
            if (cinfo.comp_info[ci].DCT_scaled_size == 1) dc_ids[dc_count++] = cinfo.comp_info[ci].component_id;
        size_t dc_length = 0;
        dc_only = wi_jpeg_without_ac_scans(data, length, dc_ids, dc_count, &dc_length);
        if (dc_only) {
            jpeg_abort_decompress(&cinfo);
            jpeg_mem_src(&cinfo, dc_only, (unsigned long)dc_length);
            jpeg_read_header(&cinfo, TRUE);
            cinfo.do_block_smoothing = FALSE;
        }
    }
    int cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    int inverted = cmyk && cinfo.saw_Adobe_marker;
    int inks = cmyk && cmyk_inks;
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    cinfo.scale_num = (unsigned int)scale_num;
    cinfo.scale_denom = 8;
    jpeg_start_decompress(&cinfo);
    uint32_t w = cinfo.output_width, h = cinfo.output_height;
    // Reduced as the rows come (wi_area_stream) when a smaller size is asked for and the pixels
    // are RGB by then: the scaled-down image is exactly the whole decode reduced afterwards, and
    // the decoded size never exists at once. Inks stay whole: they are converted before reducing.
    int reduce = reduce_width && reduce_width <= w && reduce_height <= h && (reduce_width < w || reduce_height < h)
        && !inks && !convert;
    uint32_t out_w = reduce ? reduce_width : w, out_h = reduce ? reduce_height : h;
    // A band of the reduced rows: only the source rows under it are decoded.
    uint32_t band_top = reduce && keep_rows ? keep_top : 0, band_rows = reduce && keep_rows ? keep_rows : out_h;
    pixels = wi_alloc_pixels(out_w, band_rows, 0);
    if (cmyk && !inks) cmyk_row = malloc((size_t)w * 4 * 16);
    if (reduce) {
        strip = malloc((size_t)w * 4 * 16);
        reducing = strip && pixels ? wi_area_stream_create_band(w, h, 1, pixels, out_w, out_h, band_top, band_rows) : NULL;
    }
    if (!pixels || (cmyk && !inks && !cmyk_row) || (reduce && !reducing)) {
        status = WI_ERR_NO_MEMORY;
        strcpy(err.message, "out of memory");
        longjmp(err.jump, 1);
    }
    if (convert && !inks && !(converting = wi_color_rows_start(convert, pixels, w, h))) {
        status = WI_ERR_NO_MEMORY;
        strcpy(err.message, "out of memory");
        longjmp(err.jump, 1);
    }
    // The source rows read: all, or those under the band (libjpeg skips the ones above it
    // without its inverse DCT, and the ones below are never decoded).
    uint32_t first_row = 0, end_row = h;
    if (reduce) wi_area_stream_rows(reducing, &first_row, &end_row);
    if (first_row > 0 && jpeg_skip_scanlines(&cinfo, first_row) != first_row) {
        strcpy(err.message, "the rows above the band could not be skipped");
        longjmp(err.jump, 1);
    }
    JSAMPROW rows[16];
    while (cinfo.output_scanline < end_row) {
        uint32_t y = cinfo.output_scanline;
        uint32_t count = end_row - y < 16 ? end_row - y : 16;
        // Where the RGBA rows land: the bitmap itself, or the strip the reducer reads.
        uint8_t *target = reduce ? strip : pixels + (size_t)y * w * 4;
        for (uint32_t i = 0; i < count; i++)
            rows[i] = cmyk && !inks ? cmyk_row + (size_t)i * w * 4 : target + (size_t)i * w * 4;
        JDIMENSION got = jpeg_read_scanlines(&cinfo, rows, count);
        if (inks && inverted) {
            uint8_t *p = pixels + (size_t)y * w * 4;
            for (size_t i = 0, n = (size_t)got * w * 4; i < n; i++) p[i] = (uint8_t)(255 - p[i]);
        } else if (cmyk && !inks) {
            wi_jpeg_cmyk_rows(cmyk_row, target, w, got, inverted);
        }
        for (JDIMENSION i = 0; reduce && i < got; i++) wi_area_stream_row(reducing, strip + (size_t)i * w * 4);
        wi_color_rows_ready(converting, y + got);
    }
    out->scans = cinfo.input_scan_number;
    // Stopped after the band: the rest of the data is left unread (finishing would read it).
    if (end_row == h) jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    free(dc_only);
    free(cmyk_row);
    free(strip);
    wi_area_stream_free(reducing);
    wi_color_rows_finish(converting);
    out->pixels = pixels;
    out->width = out_w; out->height = band_rows;
    if (err.truncated && !cinfo.progressive_mode) {
        // Rows before the one being read when data ran out hold real data (in the output's
        // rows: those whose every source row was real); a progressive image reads all its
        // (partial) scans before the first row is produced.
        uint64_t real = (uint64_t)err.rows_at_truncation * out_h / h;
        out->rows_decoded = real <= band_top ? 0 : (uint32_t)(real - band_top < band_rows ? real - band_top : band_rows);
    } else {
        out->rows_decoded = band_rows;
    }
    return WI_OK;
}

int wi_jpeg_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int quality, int progressive,
                   const uint8_t *icc, size_t icc_length, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    if (width == 0 || height == 0) return WI_ERR_ARGUMENT;
    struct jpeg_compress_struct cinfo;
    wi_jpeg_error err;
    wi_jpeg_setup_errors(&err, 0);
    cinfo.err = &err.base;
    unsigned char *volatile buffer = NULL;
    unsigned long size = 0;
    if (setjmp(err.jump)) {
        wi_set_message(out->message, err.message);
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        return WI_ERR_CORRUPT;
    }
    jpeg_create_compress(&cinfo);
    unsigned char *mem = NULL;
    jpeg_mem_dest(&cinfo, &mem, &size);
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = 4;
    cinfo.in_color_space = JCS_EXT_RGBA;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    if (progressive) jpeg_simple_progression(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    if (icc && icc_length > 0 && icc_length <= 0xffffffffu) jpeg_write_icc_profile(&cinfo, icc, (unsigned int)icc_length);
    while (cinfo.next_scanline < height) {
        JSAMPROW row = (JSAMPROW)(rgba + (size_t)cinfo.next_scanline * width * 4);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    buffer = mem;
    jpeg_destroy_compress(&cinfo);
    out->data = buffer;
    out->size = size;
    out->capacity = size;
    return WI_OK;
}

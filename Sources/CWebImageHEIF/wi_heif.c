#include "wi_heif.h"
#include <libheif/heif.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// ---- The canvases of derived images (grid, iovl), read before libheif allocates them.
// libheif 1.15 allocates a grid's or overlay's canvas from the size its item data declares, not
// from the ispe it checked: a 2 KB file can ask for gigabytes. This reads that size from the
// boxes (meta: pitm, iinf/infe, iloc, idat) so that the pixel limit covers it.

typedef struct { const uint8_t *p; size_t n; } span;

static uint64_t be(const uint8_t *p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = v << 8 | p[i];
    return v;
}

/// The payload of the first box of `type` directly inside `in` (0 when absent or malformed).
static int child(span in, const char *type, span *out) {
    size_t at = 0;
    while (in.n - at >= 8) {
        uint64_t size = be(in.p + at, 4);
        size_t header = 8;
        if (size == 1) {
            if (in.n - at < 16) return 0;
            size = be(in.p + at + 8, 8);
            header = 16;
        } else if (size == 0) {
            size = in.n - at;
        }
        if (size < header || size > in.n - at) return 0;
        if (memcmp(in.p + at + 4, type, 4) == 0) {
            out->p = in.p + at + header;
            out->n = (size_t)size - header;
            return 1;
        }
        at += (size_t)size;
    }
    return 0;
}

/// Reads `bytes` (0...8) big-endian bytes at *at in `s`, advancing; 0 when out of range.
static int take(span s, size_t *at, int bytes, uint64_t *value) {
    if (bytes == 0) { *value = 0; return 1; }
    if (*at > s.n || s.n - *at < (size_t)bytes) return 0;
    *value = be(s.p + *at, bytes);
    *at += (size_t)bytes;
    return 1;
}

/// Reads the canvas size in the data of derived item `id` (a grid or an overlay) through iloc.
static int item_canvas(span file, span idat, span iloc, uint64_t id, int grid, uint64_t *width, uint64_t *height) {
    size_t at = 0;
    uint64_t version, count, sizes, sizes2, method = 0, reference, base, extents, offset = 0, extent_length = 0, ignored;
    if (!take(iloc, &at, 1, &version) || !take(iloc, &at, 3, &ignored) || !take(iloc, &at, 1, &sizes)
        || !take(iloc, &at, 1, &sizes2) || !take(iloc, &at, version < 2 ? 2 : 4, &count)) return 0;
    int offset_size = (int)(sizes >> 4), length_size = (int)(sizes & 15), base_size = (int)(sizes2 >> 4);
    int index_size = version == 1 || version == 2 ? (int)(sizes2 & 15) : 0;
    if (offset_size > 8 || length_size > 8 || base_size > 8 || index_size > 8) return 0;
    int found = 0;
    for (uint64_t i = 0; i < count && !found; i++) {
        uint64_t item;
        if (!take(iloc, &at, version < 2 ? 2 : 4, &item)) return 0;
        if (version == 1 || version == 2) { if (!take(iloc, &at, 2, &method)) return 0; method &= 15; }
        if (!take(iloc, &at, 2, &reference) || !take(iloc, &at, base_size, &base) || !take(iloc, &at, 2, &extents)) return 0;
        for (uint64_t k = 0; k < extents; k++) {
            uint64_t index, off, len;
            if (!take(iloc, &at, index_size, &index) || !take(iloc, &at, offset_size, &off) || !take(iloc, &at, length_size, &len)) return 0;
            if (item == id && k == 0) { offset = base + off; extent_length = len; found = 1; }
        }
    }
    if (!found) return 0;
    span source = method == 1 ? idat : file;
    if (method > 1 || !source.p || offset > source.n) return 0;
    span data = { source.p + offset, (size_t)(source.n - offset) };
    if (extent_length) {
        if (extent_length > data.n) return 0;                     // the extent runs past its source
        data.n = (size_t)extent_length;
    }
    at = 0;
    uint64_t flags, skip;
    if (!take(data, &at, 1, &version) || !take(data, &at, 1, &flags)) return 0;
    if (grid && !take(data, &at, 2, &skip)) return 0;             // rows and columns minus one
    if (!grid && !take(data, &at, 8, &skip)) return 0;            // canvas fill value, 4 x 16 bits
    int field = flags & 1 ? 4 : 2;
    return take(data, &at, field, width) && take(data, &at, field, height);
}

/// The largest canvas any derived item (grid, iovl) of the file declares, in pixels (a grid's
/// tile can itself be an overlay): 0 when there is none; UINT64_MAX for an empty canvas or a
/// derived item whose description cannot be read within the file (libheif would read past it).
static uint64_t derived_canvas(const uint8_t *data, size_t length, uint64_t *width, uint64_t *height) {
    span file = { data, length }, meta, iinf, iloc, idat = { NULL, 0 };
    uint64_t largest = 0;
    if (!child(file, "meta", &meta) || meta.n < 4) return 0;
    meta.p += 4; meta.n -= 4;                                     // FullBox header
    if (!child(meta, "iinf", &iinf) || !child(meta, "iloc", &iloc)) return 0;
    child(meta, "idat", &idat);
    size_t at = 0;
    uint64_t version, count;
    if (!take(iinf, &at, 1, &version) || !take(iinf, &at, 3, &count) || !take(iinf, &at, version ? 4 : 2, &count)) return 0;
    span entries = { iinf.p + at, iinf.n - at }, infe;
    while (entries.n >= 8 && child(entries, "infe", &infe)) {
        size_t e = 0;
        uint64_t v, id, protection, fourcc;
        if (take(infe, &e, 1, &v) && v >= 2 && take(infe, &e, 3, &id) && take(infe, &e, v == 2 ? 2 : 4, &id)
            && take(infe, &e, 2, &protection) && take(infe, &e, 4, &fourcc)
            && (fourcc == 0x67726964 /* grid */ || fourcc == 0x696f766c /* iovl */)) {
            uint64_t w = 0, h = 0;
            uint64_t pixels = UINT64_MAX;
            if (item_canvas(file, idat, iloc, id, fourcc == 0x67726964, &w, &h) && w && h) pixels = w * h;
            if (pixels >= largest) { largest = pixels; *width = w; *height = h; }
        }
        size_t used = (size_t)(infe.p + infe.n - entries.p);
        entries.p += used; entries.n -= used;
    }
    return largest;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_library(void) { heif_init(NULL); }

struct wi_heif {
    struct heif_context *context;
    struct heif_image_handle *primary;
    uint8_t *data;
    int premultiplied;
    int has_alpha;
};

static int status_of(struct heif_error error) {
    if (error.code == heif_error_Ok) return WI_OK;
    if (error.subcode == heif_suberror_End_of_data) return WI_ERR_TRUNCATED;
    if (error.subcode == heif_suberror_Security_limit_exceeded) return WI_ERR_TOO_LARGE;
    if (error.code == heif_error_Memory_allocation_error) return WI_ERR_NO_MEMORY;
    if (error.code == heif_error_Unsupported_feature || error.code == heif_error_Unsupported_filetype) return WI_ERR_UNSUPPORTED;
    return WI_ERR_CORRUPT;
}

int wi_heif_can_decode_hevc(void) {
    pthread_once(&init_once, init_library);
    return heif_have_decoder_for_format(heif_compression_HEVC) ? 1 : 0;
}

int wi_heif_can_encode_hevc(void) {
    pthread_once(&init_once, init_library);
    return heif_have_encoder_for_format(heif_compression_HEVC) ? 1 : 0;
}

wi_heif *wi_heif_open(const uint8_t *data, size_t length, uint64_t max_pixels, wi_heif_info *info, int *status) {
    pthread_once(&init_once, init_library);
    memset(info, 0, sizeof *info);
    wi_heif *heif = calloc(1, sizeof *heif);
    if (!heif || !(heif->data = malloc(length ? length : 1)) || !(heif->context = heif_context_alloc())) {
        wi_heif_close(heif);
        *status = WI_ERR_NO_MEMORY;
        return NULL;
    }
    memcpy(heif->data, data, length);
    uint64_t canvas_width = 0, canvas_height = 0;
    uint64_t canvas = derived_canvas(data, length, &canvas_width, &canvas_height);
    if (canvas == UINT64_MAX || (max_pixels && canvas > max_pixels)) {
        info->coded_width = (uint32_t)(canvas_width > UINT32_MAX ? UINT32_MAX : canvas_width);
        info->coded_height = (uint32_t)(canvas_height > UINT32_MAX ? UINT32_MAX : canvas_height);
        int described = canvas_width && canvas_height;
        if (described) wi_say(info->message, "a derived image's canvas is %llux%llu", (unsigned long long)canvas_width, (unsigned long long)canvas_height);
        else wi_say(info->message, "a derived image (grid or overlay) is described outside the file");
        *status = described ? WI_ERR_TOO_LARGE : WI_ERR_CORRUPT;
        wi_heif_close(heif);
        return NULL;
    }
    heif_context_set_max_decoding_threads(heif->context, 0);
    struct heif_error error = heif_context_read_from_memory_without_copy(heif->context, heif->data, length, NULL);
    if (error.code == heif_error_Ok) error = heif_context_get_primary_image_handle(heif->context, &heif->primary);
    if (error.code != heif_error_Ok) {
        *status = status_of(error);
        wi_say(info->message, "%s", error.message ? error.message : "corrupt data");
        wi_heif_close(heif);
        return NULL;
    }
    struct heif_image_handle *handle = heif->primary;
    int coded_width = heif_image_handle_get_ispe_width(handle), coded_height = heif_image_handle_get_ispe_height(handle);
    int width = heif_image_handle_get_width(handle), height = heif_image_handle_get_height(handle);
    if (coded_width <= 0 || coded_height <= 0) { coded_width = width; coded_height = height; }
    info->coded_width = coded_width > 0 ? (uint32_t)coded_width : 0;
    info->coded_height = coded_height > 0 ? (uint32_t)coded_height : 0;
    if (width <= 0 || height <= 0 || coded_width <= 0 || coded_height <= 0) {
        wi_say(info->message, "zero image dimension");
        *status = WI_ERR_CORRUPT;
        wi_heif_close(heif);
        return NULL;
    }
    if (max_pixels && (uint64_t)coded_width * (uint64_t)coded_height > max_pixels) {
        wi_say(info->message, "%dx%d is over the pixel limit", coded_width, coded_height);
        *status = WI_ERR_TOO_LARGE;
        wi_heif_close(heif);
        return NULL;
    }
    info->width = (uint32_t)width;
    info->height = (uint32_t)height;
    int depth = heif_image_handle_get_luma_bits_per_pixel(handle);
    info->depth = depth > 0 ? (uint32_t)depth : 8;
    info->has_alpha = heif->has_alpha = heif_image_handle_has_alpha_channel(handle) ? 1 : 0;
    info->alpha_premultiplied = heif->premultiplied = info->has_alpha && heif_image_handle_is_premultiplied_alpha(handle);
    info->top_level_images = (uint32_t)heif_context_get_number_of_top_level_images(heif->context);
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok && nclx) {
        info->has_cicp = 1;
        info->color_primaries = (uint16_t)nclx->color_primaries;
        info->transfer_characteristics = (uint16_t)nclx->transfer_characteristics;
        info->matrix_coefficients = (uint16_t)nclx->matrix_coefficients;
        info->full_range = nclx->full_range_flag ? 1 : 0;
    }
    // Freed whether or not the call succeeded: libheif 1.15 hands the profile out before it
    // checks the values, and returns an error for one it refuses with the profile still given.
    if (nclx) heif_nclx_color_profile_free(nclx);
    *status = WI_OK;
    return heif;
}

/// round(v * 255 / max) for a sample of `depth` bits.
static inline uint8_t to8(uint32_t v, uint32_t max) { return (uint8_t)((v * 255u + max / 2) / max); }

int wi_heif_render(wi_heif *heif, wi_image *out) { return wi_heif_render_at(heif, 0, out); }

int wi_heif_render_at(wi_heif *heif, int keep_depth, wi_image *out) {
    memset(out, 0, sizeof *out);
    int deep = heif_image_handle_get_luma_bits_per_pixel(heif->primary) > 8;
    int keep = deep && keep_depth;
    // A deep image without alpha is asked for as RGB: libheif then writes and this reads three
    // samples a pixel, not four, and the alpha is written here.
    int rgb = deep && !heif->has_alpha;
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    if (!options) return WI_ERR_NO_MEMORY;
    struct heif_image *image = NULL;
    struct heif_error error = heif_decode_image(heif->primary, &image, heif_colorspace_RGB,
                                                !deep ? heif_chroma_interleaved_RGBA
                                                : rgb ? heif_chroma_interleaved_RRGGBB_LE : heif_chroma_interleaved_RRGGBBAA_LE, options);
    heif_decoding_options_free(options);
    if (error.code != heif_error_Ok || !image) {
        wi_say(out->message, "%s", error.message ? error.message : "corrupt data");
        heif_image_release(image);
        return status_of(error);
    }
    int width = heif_image_get_primary_width(image), height = heif_image_get_primary_height(image);
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
    if (!plane || width <= 0 || height <= 0) {
        heif_image_release(image);
        wi_say(out->message, "the decoder returned no pixels");
        return WI_ERR_CORRUPT;
    }
    uint8_t *pixels = keep ? wi_alloc_bytes((size_t)width * (size_t)height * 8, 0) : wi_alloc_pixels((uint32_t)width, (uint32_t)height, 0);
    if (!pixels) {
        heif_image_release(image);
        return WI_ERR_NO_MEMORY;
    }
    int bits = heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved);
    bits = !deep ? 8 : bits > 16 || bits < 9 ? 16 : bits;
    uint32_t max = (1u << bits) - 1;
    // Kept at depth, the coded 10 or 12 bits are widened to 16 by repeating their top bits below
    // them (as PNG's sBIT scaling does: within 1 of v * 65535 / max, and a shift a sample); an
    // 8-bit decode rounds them by a table of every coded value. The bits over the depth, which
    // a decoder should not set, are ignored.
    unsigned up = 16u - (unsigned)bits, down = 2u * (unsigned)bits - 16u;
    uint8_t *eight = deep && !keep ? malloc(max + 1) : NULL;
    if (deep && !keep && !eight) {
        free(pixels);
        heif_image_release(image);
        return WI_ERR_NO_MEMORY;
    }
    for (uint32_t v = 0; eight && v <= max; v++) eight[v] = to8(v, max);
    for (int y = 0; y < height && keep; y++) {
        const uint8_t *row = plane + (size_t)y * (size_t)stride;
        uint16_t *dst = (uint16_t *)(void *)(pixels + (size_t)y * (size_t)width * 8);
        if (rgb) {
            for (int x = 0; x < width; x++) {
                for (int c = 0; c < 3; c++) {
                    uint16_t v = (uint16_t)(((uint32_t)row[6 * x + 2 * c] | (uint32_t)row[6 * x + 2 * c + 1] << 8) & max);
                    dst[4 * x + c] = (uint16_t)((v << up) | (v >> down));
                }
                dst[4 * x + 3] = 65535;
            }
            continue;
        }
        for (int i = 0; i < width * 4; i++) {
            uint16_t v;
            memcpy(&v, row + 2 * i, 2);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            v = __builtin_bswap16(v);
#endif
            v &= (uint16_t)max;
            dst[i] = (uint16_t)((v << up) | (v >> down));
        }
        if (heif->premultiplied) {
            for (int x = 0; x < width; x++) {
                uint32_t a = dst[4 * x + 3];
                for (int c = 0; c < 3; c++) {
                    uint32_t v = a ? (uint32_t)(((uint64_t)dst[4 * x + c] * 65535u + a / 2) / a) : 0;
                    dst[4 * x + c] = (uint16_t)(v > 65535 ? 65535 : v);
                }
            }
        }
    }
    for (int y = 0; y < height && !keep; y++) {
        const uint8_t *row = plane + (size_t)y * (size_t)stride;
        uint8_t *dst = pixels + (size_t)y * (size_t)width * 4;
        if (!deep) {
            memcpy(dst, row, (size_t)width * 4);
        } else if (rgb) {
            for (int x = 0; x < width; x++) {
                for (int c = 0; c < 3; c++) dst[4 * x + c] = eight[((uint32_t)row[6 * x + 2 * c] | (uint32_t)row[6 * x + 2 * c + 1] << 8) & max];
                dst[4 * x + 3] = 255;
            }
        } else {
            for (int i = 0; i < width * 4; i++) dst[i] = eight[((uint32_t)row[2 * i] | (uint32_t)row[2 * i + 1] << 8) & max];
        }
        if (heif->premultiplied) wi_unpremultiply(dst, (size_t)width);
    }
    free(eight);
    heif_image_release(image);
    out->pixels = pixels;
    out->deep = keep ? 1 : 0;
    out->width = (uint32_t)width;
    out->height = (uint32_t)height;
    out->rows_decoded = (uint32_t)height;
    return WI_OK;
}

size_t wi_heif_icc(const wi_heif *heif, uint8_t **bytes) {
    *bytes = NULL;
    size_t size = heif_image_handle_get_raw_color_profile_size(heif->primary);
    if (!size || !(*bytes = malloc(size))) return 0;
    if (heif_image_handle_get_raw_color_profile(heif->primary, *bytes).code != heif_error_Ok) {
        free(*bytes);
        *bytes = NULL;
        return 0;
    }
    return size;
}

void wi_heif_close(wi_heif *heif) {
    if (!heif) return;
    if (heif->primary) heif_image_handle_release(heif->primary);
    if (heif->context) heif_context_free(heif->context);
    free(heif->data);
    free(heif);
}

// ---- Encoding

static struct heif_error write_buffer(struct heif_context *context, const void *data, size_t size, void *userdata) {
    (void)context;
    wi_buffer *out = userdata;
    struct heif_error ok = { heif_error_Ok, heif_suberror_Unspecified, "" };
    if (out->size + size > out->capacity) {
        size_t capacity = (out->size + size) * 2;
        uint8_t *grown = realloc(out->data, capacity);
        if (!grown) {
            struct heif_error failed = { heif_error_Memory_allocation_error, heif_suberror_Unspecified, "out of memory" };
            return failed;
        }
        out->data = grown;
        out->capacity = capacity;
    }
    memcpy(out->data + out->size, data, size);
    out->size += size;
    return ok;
}

int wi_heif_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int has_alpha, int quality, int lossless,
                   const char *preset, const uint8_t *icc, size_t icc_length, const uint8_t *exif, size_t exif_length,
                   const uint8_t *xmp, size_t xmp_length, int bits, int primaries, int transfer, wi_buffer *out) {
    pthread_once(&init_once, init_library);
    memset(out, 0, sizeof *out);
    if (bits != 8 && bits != 10 && bits != 12) return WI_ERR_ARGUMENT;
    struct heif_context *context = heif_context_alloc();
    struct heif_encoder *encoder = NULL;
    struct heif_image *image = NULL;
    struct heif_image_handle *handle = NULL;
    struct heif_color_profile_nclx *nclx = NULL;
    struct heif_encoding_options *encoding = NULL;
    int status = WI_OK;
    struct heif_error error = { heif_error_Ok, heif_suberror_Unspecified, "" };
    if (!context) return WI_ERR_NO_MEMORY;
    int deep = bits > 8;
    uint32_t top = (1u << bits) - 1;
    error = heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder);
    if (error.code != heif_error_Ok) { status = WI_ERR_UNSUPPORTED; goto done; }
    heif_encoder_set_lossy_quality(encoder, quality < 0 ? 0 : quality > 100 ? 100 : quality);
    if (lossless) heif_encoder_set_lossless(encoder, 1);
    if (preset) heif_encoder_set_parameter_string(encoder, "preset", preset);
    heif_encoder_set_parameter_string(encoder, "threads", "1");
    enum heif_chroma chroma = deep ? (has_alpha ? heif_chroma_interleaved_RRGGBBAA_LE : heif_chroma_interleaved_RRGGBB_LE)
                                   : (has_alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB);
    error = heif_image_create((int)width, (int)height, heif_colorspace_RGB, chroma, &image);
    if (error.code == heif_error_Ok) error = heif_image_add_plane(image, heif_channel_interleaved, (int)width, (int)height, bits);
    if (error.code != heif_error_Ok) { status = status_of(error); goto done; }
    int stride = 0;
    uint8_t *plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
    int channels = has_alpha ? 4 : 3;
    for (uint32_t y = 0; y < height; y++) {
        uint8_t *dst = plane + (size_t)y * (size_t)stride;
        if (deep) {
            // 16-bit samples rounded to 10 or 12 bits, stored little-endian in two bytes.
            const uint16_t *src = (const uint16_t *)rgba + (size_t)y * width * 4;
            for (uint32_t x = 0; x < width; x++)
                for (int c = 0; c < channels; c++) {
                    uint32_t v = ((uint32_t)src[4 * x + c] * top + 32767u) / 65535u;
                    dst[2 * (channels * x + c)] = (uint8_t)v;
                    dst[2 * (channels * x + c) + 1] = (uint8_t)(v >> 8);
                }
            continue;
        }
        const uint8_t *src = rgba + (size_t)y * width * 4;
        if (has_alpha) memcpy(dst, src, (size_t)width * 4);
        else for (uint32_t x = 0; x < width; x++) { dst[3 * x] = src[4 * x]; dst[3 * x + 1] = src[4 * x + 1]; dst[3 * x + 2] = src[4 * x + 2]; }
    }
    if (icc && icc_length) {
        heif_image_set_raw_color_profile(image, "prof", icc, icc_length);
    } else if (transfer) {
        // An HDR image's code points in an nclx box (YCbCr by BT.2020's matrix, full range),
        // written even where libheif would leave it out for macOS's sake.
        if (!(nclx = heif_nclx_color_profile_alloc()) || !(encoding = heif_encoding_options_alloc())) {
            status = WI_ERR_NO_MEMORY;
            goto done;
        }
        nclx->color_primaries = (enum heif_color_primaries)primaries;
        nclx->transfer_characteristics = (enum heif_transfer_characteristics)transfer;
        nclx->matrix_coefficients = heif_matrix_coefficients_ITU_R_BT_2020_2_non_constant_luminance;
        nclx->full_range_flag = 1;
        error = heif_image_set_nclx_color_profile(image, nclx);
        if (error.code != heif_error_Ok) { status = status_of(error); goto done; }
        encoding->output_nclx_profile = nclx;
        encoding->macOS_compatibility_workaround_no_nclx_profile = 0;
    }
    error = heif_context_encode_image(context, image, encoder, encoding, &handle);
    if (error.code != heif_error_Ok) { status = WI_ERR_ARGUMENT; goto done; }
    if (exif && exif_length) error = heif_context_add_exif_metadata(context, handle, exif, (int)exif_length);
    if (error.code == heif_error_Ok && xmp && xmp_length) error = heif_context_add_XMP_metadata(context, handle, xmp, (int)xmp_length);
    if (error.code != heif_error_Ok) { status = WI_ERR_ARGUMENT; goto done; }
    struct heif_writer writer = { 1, write_buffer };
    error = heif_context_write(context, &writer, out);
    if (error.code != heif_error_Ok) status = status_of(error);
done:
    if (status != WI_OK) {
        wi_say(out->message, "%s", error.message && error.message[0] ? error.message : "the encoder refused the image");
        free(out->data);
        out->data = NULL;
        out->size = out->capacity = 0;
    }
    if (handle) heif_image_handle_release(handle);
    if (image) heif_image_release(image);
    if (encoder) heif_encoder_release(encoder);
    if (encoding) heif_encoding_options_free(encoding);
    if (nclx) heif_nclx_color_profile_free(nclx);
    heif_context_free(context);
    return status;
}

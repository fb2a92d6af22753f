// Plain C interface over libpng, libjpeg-turbo, libwebp and giflib.
//
// Every setjmp/longjmp stays inside the .c files of this target: each function
// returns a status code and never unwinds through its caller. Pixel buffers
// handed out in `wi_image.pixels` are RGBA8, straight alpha, rows top to bottom,
// tightly packed (width * 4 bytes per row), allocated with malloc: the caller
// owns them and releases them with free().
#ifndef WI_CODECS_H
#define WI_CODECS_H

#include <stddef.h>
#include <stdint.h>

enum {
    WI_OK = 0,
    WI_NEED_MORE = 1,
    WI_ERR_CORRUPT = -1,
    WI_ERR_TRUNCATED = -2,
    WI_ERR_TOO_LARGE = -3,
    WI_ERR_NO_MEMORY = -4,
    WI_ERR_UNSUPPORTED = -5,
    WI_ERR_ARGUMENT = -6,
    WI_HEADER = 2,            // a stream read its header: configure it, then go on
    WI_COLOR_IDENTITY = 3,    // the colour description is sRGB's already: nothing to convert
};

#define WI_MESSAGE_SIZE 160

/// Formats a decoder's message into `message` (WI_MESSAGE_SIZE bytes, cut to fit); nothing when
/// `message` is NULL. For the shims of the coder plug-ins, which report as the built-in ones do.
void wi_say(char *message, const char *format, ...) __attribute__((format(printf, 2, 3)));

/// A decoded RGBA image (or a part of one) and what the decoder said.
typedef struct {
    uint8_t *pixels;          // malloc'd, owned by the caller; NULL on failure
    uint32_t width;
    uint32_t height;
    uint32_t rows_decoded;    // rows holding real data (incremental decoding)
    uint32_t scans;           // progressive JPEG scans or PNG passes seen
    char message[WI_MESSAGE_SIZE];
    uint32_t deep;            // 1: 16 bits a channel (native-endian uint16_t), 8 bytes a pixel; 0: RGBA8
} wi_image;

/// A growable byte buffer produced by the encoders (malloc'd, owned by the caller).
typedef struct {
    uint8_t *data;
    size_t size;
    size_t capacity;
    char message[WI_MESSAGE_SIZE];
} wi_buffer;

uint32_t wi_crc32(uint32_t crc, const uint8_t *data, size_t length);
/// Inflates a zlib stream into `out` (malloc'd), refusing to grow past `max_output` bytes
/// (WI_ERR_TOO_LARGE): WI_OK, WI_ERR_CORRUPT, WI_ERR_TRUNCATED or WI_ERR_NO_MEMORY.
int wi_inflate(const uint8_t *data, size_t length, size_t max_output, wi_buffer *out);

/// Allocates a pixel buffer (huge pages for large ones, a recycled one of the same size when the
/// pixel pool holds one); release with free(), or with wi_pixel_pool_give() to recycle it.
uint8_t *wi_alloc_bytes(size_t size, int zeroed);
uint8_t *wi_alloc_pixels(uint32_t width, uint32_t height, int zeroed);
/// Turns `count` premultiplied RGBA8 pixels into straight ones in place (rounded; a fully
/// transparent pixel becomes transparent black).
void wi_unpremultiply(uint8_t *rgba, size_t count);
/// 16-bit channel values to 8 bits, rounded (v * 255 / 65535), and 8-bit ones to 16 (v * 257).
void wi_pixels_16_to_8(const uint16_t *src, uint8_t *dst, size_t values);
void wi_pixels_8_to_16(const uint8_t *src, uint16_t *dst, size_t values);
/// The image of `height` rows of premultiplied 32-bit native-endian ARGB words (cairo's ARGB32,
/// `stride` bytes apart), as straight RGBA8 in `out`: what the vector plug-ins draw. WI_OK or
/// WI_ERR_NO_MEMORY (with a message).
int wi_image_from_argb32(const uint8_t *src, size_t stride, uint32_t width, uint32_t height, wi_image *out);

// ---- Pixel pool: freed buffers of 64 KiB to 4 MiB kept (16 MiB in all by default, 32 buffers)
// for the next allocation of the same byte count. Thread-safe.
#define WI_POOL_MIN_BUFFER ((size_t)64 << 10)
#define WI_POOL_MAX_BUFFER ((size_t)4 << 20)
/// Whether buffers of `size` bytes are recycled.
int wi_pixel_pool_recycles(size_t size);
/// A recycled buffer of exactly `size` bytes (malloc'd; its contents are stale), or NULL.
uint8_t *wi_pixel_pool_take(size_t size);
/// Frees a malloc'd buffer of at least `size` bytes, or keeps it for the next of that size.
void wi_pixel_pool_give(uint8_t *pointer, size_t size);
/// Frees every kept buffer; returns the bytes freed.
size_t wi_pixel_pool_drain(void);
/// Sets how many bytes the pool may keep (0 turns it off, draining it); returns the old limit.
size_t wi_pixel_pool_set_limit(size_t bytes);
/// How many bytes the pool may keep.
size_t wi_pixel_pool_limit(void);
/// The bytes kept now.
size_t wi_pixel_pool_bytes(void);
/// Under AddressSanitizer, whether the first byte at `pointer` is poisoned (1) or not (0), as a
/// kept buffer is until it is taken again; -1 in a build without AddressSanitizer.
int wi_pixel_pool_poisoned(const uint8_t *pointer);

// ---- PNG (libpng progressive reader; used for whole files and incremental data)
typedef struct wi_png_decoder wi_png_decoder;
wi_png_decoder *wi_png_decoder_create(uint64_t max_pixels);
/// Keeps a 16-bit image's samples (wi_image.deep, native-endian) instead of their high bytes;
/// before the first push. Images of 8 bits or fewer still come out RGBA8.
void wi_png_decoder_keep_16(wi_png_decoder *decoder);
/// Feeds bytes. WI_OK once the image and its IEND are complete, WI_NEED_MORE, or an error.
int wi_png_decoder_push(wi_png_decoder *decoder, const uint8_t *data, size_t length);
/// Width and height once the header was read (0 before).
void wi_png_decoder_size(const wi_png_decoder *decoder, uint32_t *width, uint32_t *height, int *interlaced);
/// A copy of the pixels decoded so far (NULL pixels before the header).
int wi_png_decoder_snapshot(const wi_png_decoder *decoder, wi_image *out);
/// How far decoding got: the pass (0 for a plain PNG) times 2^32 plus the rows of that pass;
/// it grows with every new row, so an unchanged value means a snapshot would show nothing new.
uint64_t wi_png_decoder_progress(const wi_png_decoder *decoder);
/// Whether every row of the image arrived (IEND may still be missing).
int wi_png_decoder_rows_complete(const wi_png_decoder *decoder);
/// Decodes at `width` x `height` instead, each row reduced by area averaging as it is inflated
/// (wi_area_stream), so the full-size pixels never exist: before the first push, and only for an
/// image that turns out 8-bit, opaque (no alpha, no tRNS) and not interlaced, and larger than
/// the size in a direction; any other image is decoded whole, as without this call. What
/// wi_png_decoder_take gives tells which (its width and height).
void wi_png_decoder_reduce_to(wi_png_decoder *decoder, uint32_t width, uint32_t height);
/// Moves the finished pixel buffer into `out` (after WI_OK).
int wi_png_decoder_take(wi_png_decoder *decoder, wi_image *out);
const char *wi_png_decoder_message(const wi_png_decoder *decoder);
void wi_png_decoder_destroy(wi_png_decoder *decoder);

/// `icc` (may be NULL) is embedded as an iCCP chunk; libpng leaves out a profile that does not
/// fit an RGB image. `adaptive_filters` 0 writes every row unfiltered.
int wi_png_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int keep_alpha,
                  int compression_level, int adaptive_filters, const uint8_t *icc, size_t icc_length, wi_buffer *out);
/// The same for 16-bit samples (native-endian R, G, B, A): a 16-bit PNG.
int wi_png_encode_16(const uint16_t *rgba, uint32_t width, uint32_t height, int keep_alpha,
                     int level, int adaptive_filters, const uint8_t *icc, size_t icc_length, wi_buffer *out);

// ---- JPEG (libjpeg-turbo)
typedef struct {
    uint32_t width;
    uint32_t height;
    int components;
    int color_space;          // J_COLOR_SPACE of the file
    int progressive;
    char message[WI_MESSAGE_SIZE];
} wi_jpeg_info;

int wi_jpeg_read_info(const uint8_t *data, size_t length, wi_jpeg_info *info);
typedef struct wi_color_transform wi_color_transform;
/// Decodes at scale_num/8 (1...8). With tolerate_truncation, missing data is a
/// warning and `rows_decoded` says how far real data went; otherwise it is WI_ERR_TRUNCATED.
/// A CMYK or YCCK image becomes RGBA by the naive formula, or, with `cmyk_inks`, stays four
/// ink amounts a pixel (C, M, Y, K; 0 = no ink, Adobe's inverted storage undone) for a
/// colour transform through its profile. With `convert` (an RGB transform; NULL for none) the
/// pixels come out converted by it, rows converted as they are decoded (wi_color_rows_start).
/// With a `reduce_width` x `reduce_height` (both 0 for none) no larger than the scaled size,
/// an RGB result is area-reduced to it as the rows come (wi_area_stream): the same pixels as
/// wi_area_downscale of the whole decode, without the whole decode in memory. It does not apply
/// with `cmyk_inks` or `convert`; `out`'s size says which was done. With `keep_rows` (0 for all)
/// and a reduction, only rows [keep_top, keep_top + keep_rows) of the reduced image are made
/// (`out` is that band): the source rows above them are skipped, those below never decoded.
/// At 1/8, a complete progressive file's AC scans of the components that come out one pixel a
/// block are dropped unread (wi_jpeg_without_ac_scans): the same pixels, fewer scans.
int wi_jpeg_decode(const uint8_t *data, size_t length, int scale_num, uint32_t reduce_width, uint32_t reduce_height,
                   uint32_t keep_top, uint32_t keep_rows, int tolerate_truncation, uint64_t max_pixels, int cmyk_inks,
                   const wi_color_transform *convert, wi_image *out);
/// `icc` (may be NULL) is embedded as APP2 ICC_PROFILE segments.
int wi_jpeg_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int quality,
                   int progressive, const uint8_t *icc, size_t icc_length, wi_buffer *out);

/// A JPEG decoded as its bytes arrive, each byte once; it keeps only the bytes not yet
/// consumed. Append bytes; on WI_HEADER read the header, configure the scale, and go on.
typedef struct wi_jpeg_stream wi_jpeg_stream;
wi_jpeg_stream *wi_jpeg_stream_create(uint64_t max_pixels);
void wi_jpeg_stream_destroy(wi_jpeg_stream *stream);
/// Adds bytes and decodes as far as they go: WI_NEED_MORE, WI_HEADER, WI_OK (the whole image
/// is in) or an error (then every call returns it).
int wi_jpeg_stream_append(wi_jpeg_stream *stream, const uint8_t *data, size_t length);
/// What went wrong, after an error.
const char *wi_jpeg_stream_message(const wi_jpeg_stream *stream);
/// The header, once WI_HEADER was returned.
int wi_jpeg_stream_header(wi_jpeg_stream *stream, wi_jpeg_info *info);
/// Decodes at scale_num/8 (1...8) and goes on with the bytes already given. WI_ERR_UNSUPPORTED
/// for an arithmetic-coded file (libjpeg cannot suspend in it): decode it whole instead.
int wi_jpeg_stream_configure(wi_jpeg_stream *stream, int scale_num);
/// final = 0: the image so far (WI_NEED_MORE when nothing new since the last one); final = 1:
/// the complete image (WI_ERR_TRUNCATED before the end of the file). Pixels are the caller's.
int wi_jpeg_stream_render(wi_jpeg_stream *stream, int final, wi_image *out);

// ---- WebP (libwebp, libwebpdemux, libwebpmux)
typedef struct {
    uint32_t width;
    uint32_t height;
    int has_alpha;
    int has_animation;
    uint32_t frame_count;
    uint32_t loop_count;
    char message[WI_MESSAGE_SIZE];
} wi_webp_info;

int wi_webp_read_info(const uint8_t *data, size_t length, wi_webp_info *info);
/// Decodes a still WebP, optionally scaled by libwebp to scaled_width x scaled_height (0 = full size).
int wi_webp_decode(const uint8_t *data, size_t length, uint32_t scaled_width, uint32_t scaled_height,
                   uint64_t max_pixels, wi_image *out);
/// Reads the EXIF chunk (a pointer into `data`), if any.
int wi_webp_exif(const uint8_t *data, size_t length, size_t *offset, size_t *exif_length);
/// Finds the first chunk named `fourcc` ("EXIF", "XMP ", ...): its offset in `data` and length;
/// WI_OK, WI_NEED_MORE when absent, WI_ERR_CORRUPT when the container does not parse.
int wi_webp_chunk(const uint8_t *data, size_t length, const char *fourcc, size_t *offset, size_t *chunk_length);
/// `data` without its EXIF and XMP chunks (libwebpmux, which also clears the VP8X flags), with
/// `exif` (a TIFF block) as its EXIF chunk and `xmp` as its XMP chunk when given (libwebpmux
/// sets the VP8X flags); WI_ERR_CORRUPT when libwebpmux cannot read it.
int wi_webp_strip_metadata(const uint8_t *data, size_t length, const uint8_t *exif, size_t exif_length,
                           const uint8_t *xmp, size_t xmp_length, wi_buffer *out);

typedef struct wi_webp_anim wi_webp_anim;
/// Keeps its own copy of the data. Composites frames (blend, dispose) on request.
wi_webp_anim *wi_webp_anim_create(const uint8_t *data, size_t length, uint64_t max_pixels, int *status,
                                  char message[WI_MESSAGE_SIZE]);
uint32_t wi_webp_anim_frame_count(const wi_webp_anim *anim);
uint32_t wi_webp_anim_frame_duration(const wi_webp_anim *anim, uint32_t index);
int wi_webp_anim_render(wi_webp_anim *anim, uint32_t index, wi_image *out);
void wi_webp_anim_destroy(wi_webp_anim *anim);

typedef struct wi_webp_incremental wi_webp_incremental;
wi_webp_incremental *wi_webp_incremental_create(void);
int wi_webp_incremental_append(wi_webp_incremental *decoder, const uint8_t *data, size_t length);
int wi_webp_incremental_snapshot(const wi_webp_incremental *decoder, wi_image *out);
/// Rows decoded so far (0 before the header): a snapshot shows nothing new while it is unchanged.
uint32_t wi_webp_incremental_rows(const wi_webp_incremental *decoder);
void wi_webp_incremental_destroy(wi_webp_incremental *decoder);

/// `icc` (may be NULL) is embedded as an ICCP chunk (an extended VP8X file).
int wi_webp_encode(const uint8_t *rgba, uint32_t width, uint32_t height, float quality, int lossless,
                   const uint8_t *icc, size_t icc_length, wi_buffer *out);
typedef struct wi_webp_anim_encoder wi_webp_anim_encoder;
wi_webp_anim_encoder *wi_webp_anim_encoder_create(uint32_t width, uint32_t height, uint32_t loop_count);
int wi_webp_anim_encoder_add(wi_webp_anim_encoder *encoder, const uint8_t *rgba, uint32_t duration_ms,
                             float quality, int lossless);
int wi_webp_anim_encoder_finish(wi_webp_anim_encoder *encoder, const uint8_t *icc, size_t icc_length, wi_buffer *out);
void wi_webp_anim_encoder_destroy(wi_webp_anim_encoder *encoder);

// ---- GIF (giflib)
typedef struct wi_gif wi_gif;
/// Parses every frame (LZW-decoded palette indices, not yet composited). With
/// tolerate_truncation, a cut stream keeps its complete frames instead of failing.
wi_gif *wi_gif_open(const uint8_t *data, size_t length, uint64_t max_pixels, int tolerate_truncation,
                    int *status, char message[WI_MESSAGE_SIZE]);
uint32_t wi_gif_width(const wi_gif *gif);
uint32_t wi_gif_height(const wi_gif *gif);
uint32_t wi_gif_frame_count(const wi_gif *gif);
/// NETSCAPE2.0 loop count; -1 when the file has none.
int wi_gif_loop_count(const wi_gif *gif);
/// Delay in centiseconds as stored (0 when there is no Graphic Control Extension).
uint32_t wi_gif_frame_delay(const wi_gif *gif, uint32_t index);
/// Full-canvas composite of frame `index` (disposal methods applied, transparent start canvas).
int wi_gif_render(wi_gif *gif, uint32_t index, wi_image *out);
void wi_gif_close(wi_gif *gif);

typedef struct wi_gif_encoder wi_gif_encoder;
wi_gif_encoder *wi_gif_encoder_create(uint32_t width, uint32_t height, int loop_count);
int wi_gif_encoder_add(wi_gif_encoder *encoder, const uint8_t *rgba, uint32_t delay_cs);
int wi_gif_encoder_finish(wi_gif_encoder *encoder, wi_buffer *out);
void wi_gif_encoder_destroy(wi_gif_encoder *encoder);

// ---- Digests (OpenSSL libcrypto) ----

/// MD5 of `size` bytes into `out`; WI_OK, or WI_ERR_ARGUMENT when libcrypto refuses.
int wi_md5(const void *data, size_t size, uint8_t out[16]);
/// SHA-256 of `size` bytes into `out`; WI_OK, or WI_ERR_ARGUMENT when libcrypto refuses.
int wi_sha256(const void *data, size_t size, uint8_t out[32]);
/// HMAC-SHA256 of `data` under `key` (OpenSSL's HMAC).
int wi_hmac_sha256(const void *key, size_t key_size, const void *data, size_t size, uint8_t out[32]);
/// 1 when the `size` bytes at `a` and `b` are equal, compared in constant time.
int wi_equal_constant_time(const void *a, const void *b, size_t size);

// ---- Compositing helpers for APNG (straight alpha RGBA8)
/// Copies (blend 0) or alpha-composites "over" (blend 1) a w x h frame onto the canvas at x, y.
void wi_composite(uint8_t *canvas, uint32_t canvas_width, uint32_t canvas_height,
                  const uint8_t *frame, uint32_t x, uint32_t y, uint32_t width, uint32_t height, int blend_over);
void wi_clear_rect(uint8_t *canvas, uint32_t canvas_width, uint32_t canvas_height,
                   uint32_t x, uint32_t y, uint32_t width, uint32_t height);

/// Area-averaging downscale of RGBA8 `src` (width x height, rows packed) into `dst`
/// (target_width x target_height, rows packed; no larger than the source in either direction):
/// each output pixel the coverage-weighted mean of the source pixels under it, premultiplied
/// unless `opaque` (every alpha 255). WI_OK, WI_ERR_ARGUMENT or WI_ERR_NO_MEMORY.
int wi_area_downscale(const uint8_t *src, uint32_t width, uint32_t height, int opaque,
                      uint8_t *dst, uint32_t target_width, uint32_t target_height);
/// The same a source row at a time (in order, `width` RGBA8 pixels each), for a source whose
/// pixels never all exist at once: each output row of `dst` is written once its last source row
/// is in. NULL for the arguments wi_area_downscale refuses, or out of memory.
typedef struct wi_area_stream wi_area_stream;
wi_area_stream *wi_area_stream_create(uint32_t width, uint32_t height, int opaque,
                                      uint8_t *dst, uint32_t target_width, uint32_t target_height);
/// The same for output rows [first, first + count) only, the first of them at `dst`: the source
/// rows it needs are [*first, *end) of wi_area_stream_rows, fed from *first on (rows after *end
/// change nothing). NULL also for a band outside the target.
wi_area_stream *wi_area_stream_create_band(uint32_t width, uint32_t height, int opaque, uint8_t *dst,
                                           uint32_t target_width, uint32_t target_height, uint32_t first, uint32_t count);
/// The source rows the stream's output rows are made of: [*first, *end).
void wi_area_stream_rows(const wi_area_stream *stream, uint32_t *first, uint32_t *end);
/// Feeds the next source row; WI_ERR_ARGUMENT after the last one.
int wi_area_stream_row(wi_area_stream *stream, const uint8_t *row);
void wi_area_stream_free(wi_area_stream *stream);

// MARK: - Colour conversion (lcms2)

/// What a colour transform reads from each four-byte pixel.
enum {
    WI_COLOR_INPUT_RGBA = 1,  // R, G, B (alpha kept)
    WI_COLOR_INPUT_GRAY = 2,  // the first byte (grey expanded to RGBA)
    WI_COLOR_INPUT_CMYK = 3,  // C, M, Y, K ink amounts (0 = none); alpha becomes 255
};
/// Flags of wi_color_transform_from_icc.
enum {
    WI_COLOR_LCMS_ONLY = 1,   // lcms2's own evaluator for every profile, sRGB's too (the reference)
    WI_COLOR_DEEP = 2,        // pixels of 16 bits a channel (RGBA16, grey expanded to it), through lcms2
};
/// A transform from an ICC profile to sRGB (relative colorimetric). WI_OK with `*input` set,
/// WI_COLOR_IDENTITY for a profile with sRGB's colorants and curves, WI_ERR_CORRUPT for bytes
/// that are not a profile, WI_ERR_UNSUPPORTED for a colour space or class not converted.
/// An RGB matrix-shaper profile converts through tables read from lcms2's parsed profile
/// (within 1 of lcms2's own transform for every 8-bit input) unless `flags` say otherwise.
int wi_color_transform_from_icc(const uint8_t *icc, size_t length, int flags, wi_color_transform **out, int *input);
/// A transform from CICP primaries and transfer (ITU-T H.273) to sRGB: primaries 1, 9, 12 with
/// the SDR transfers (1, 4, 5, 6, 8, 13, 14, 15); WI_COLOR_IDENTITY for sRGB; else WI_ERR_UNSUPPORTED.
int wi_color_transform_from_cicp(int primaries, int transfer, int flags, wi_color_transform **out, int *input);
/// Converts `count` pixels (four bytes each, eight with WI_COLOR_DEEP) in place. Thread-safe: one transform may serve many threads.
void wi_color_transform_apply(const wi_color_transform *transform, uint8_t *pixels, size_t count);
/// Frees a transform (NULL is ignored).
void wi_color_transform_free(wi_color_transform *transform);
/// Whether `transform` converts through the matrix-shaper tables rather than lcms2's evaluator.
int wi_color_transform_is_shaper(const wi_color_transform *transform);
/// An RGB matrix-shaper ICC profile built by lcms2 from a white point and primaries (CIE x, y:
/// red, green, blue) with one gamma curve, serialised (for tests: ProPhoto, Adobe RGB).
int wi_color_rgb_profile(const double white[2], const double primaries[6], double gamma, wi_buffer *out);
/// Rows of an RGBA8 image converted by a transform as a decoder finishes them: on a helper
/// thread for a large image, so that the conversion overlaps the decode (the caller's thread
/// joins in once the decode ends), else by the caller, batch by batch. NULL without memory.
typedef struct wi_color_rows wi_color_rows;
wi_color_rows *wi_color_rows_start(const wi_color_transform *transform, uint8_t *pixels, uint32_t width, uint32_t height);
/// Rows [0, rows) are final and may be converted.
void wi_color_rows_ready(wi_color_rows *rows, uint32_t count);
/// Converts every row not converted yet (all `height` of them are taken as final), waits for
/// the helper and frees `rows` (NULL is ignored).
void wi_color_rows_finish(wi_color_rows *rows);
/// Stops converting, waits for the helper (so the pixels may be freed after) and frees `rows`.
void wi_color_rows_cancel(wi_color_rows *rows);
/// lcms2's own sRGB profile, serialised (for encoders and tests).
int wi_color_srgb_profile(wi_buffer *out);

// MARK: - HDR tone mapping

/// The HDR transfer functions (CICP transfer_characteristics).
enum {
    WI_TRANSFER_PQ = 16,   // SMPTE ST 2084
    WI_TRANSFER_HLG = 18,  // ARIB STD-B67
};
/// HDR pixels (RGBA16, PQ or HLG over CICP primaries 1, 9 or 12) mapped to sRGB by BT.2390's
/// EETF on the largest linear component, into an SDR white of BT.2408's reference white
/// (203 cd/m²): the source's peak is compressed to it. `source_peak`: the content's peak in cd/m² for PQ (0: 1000); HLG assumes its nominal
/// 1000 cd/m² display. WI_ERR_UNSUPPORTED for other code points.
typedef struct wi_tone_map wi_tone_map;
int wi_tone_map_create(int primaries, int transfer, double source_peak, wi_tone_map **out);
/// Maps `count` RGBA16 pixels into `out`: RGBA8, or RGBA16 with `deep`. `out` may be `in`
/// (the output never overtakes the input). Thread-safe: one map may serve many threads.
void wi_tone_map_apply(const wi_tone_map *map, const uint16_t *in, size_t count, void *out, int deep);
/// Frees a map (NULL is ignored).
void wi_tone_map_free(wi_tone_map *map);


// MARK: - BMP and icon DIBs (our own decoder)

/// What a BMP (or an icon's DIB) header says.
typedef struct {
    uint32_t width, height;   // an icon's DIB: the height of its colours, half the stored one
    uint32_t bits, compression, colors_used;
    int top_down;
    uint32_t masks[4];        // red, green, blue, alpha bit fields (16 and 32 bits)
    uint32_t palette_offset, palette_size, palette_entry;
    uint32_t data_offset;
    char message[WI_MESSAGE_SIZE];
} wi_bmp_info;
/// Reads a BMP file's headers, or with `dib_only` an icon's DIB (no file header, doubled height).
int wi_bmp_read_info(const uint8_t *data, size_t length, int dib_only, wi_bmp_info *info);
/// Decodes to RGBA8: WI_ERR_TOO_LARGE over `max_pixels` before allocating, WI_ERR_TRUNCATED when
/// the pixels are cut short, WI_ERR_UNSUPPORTED for JPEG/PNG-in-BMP and OS/2 compressions. An
/// icon's DIB applies its AND mask (or, at 32 bits, its alpha byte).
int wi_bmp_decode(const uint8_t *data, size_t length, int dib_only, uint64_t max_pixels, wi_image *out);

#endif

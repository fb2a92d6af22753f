// Plain C interface over libheif (the WebImageHEIF plug-in). Same conventions as wi_codecs.h:
// status codes, RGBA8 straight-alpha pixels in malloc'd buffers the caller frees.
#ifndef WI_HEIF_H
#define WI_HEIF_H

#include "wi_codecs.h"

/// What the container says about the primary image.
typedef struct {
    uint32_t width;            // as displayed: clap, irot and imir applied
    uint32_t height;
    uint32_t coded_width;      // ispe: the coded image before them
    uint32_t coded_height;
    uint32_t depth;            // luma bits per sample
    int has_alpha;
    int alpha_premultiplied;
    int has_cicp;
    uint16_t color_primaries;  // CICP (nclx), when has_cicp
    uint16_t transfer_characteristics;
    uint16_t matrix_coefficients;
    int full_range;
    uint32_t top_level_images;
    char message[WI_MESSAGE_SIZE];
} wi_heif_info;

typedef struct wi_heif wi_heif;

/// Parses the container (no pixel is decoded). Keeps its own copy of the data. Refuses a
/// primary image over `max_pixels` (WI_ERR_TOO_LARGE) from its declared size.
wi_heif *wi_heif_open(const uint8_t *data, size_t length, uint64_t max_pixels, wi_heif_info *info, int *status);
/// Decodes the primary image (never a thumbnail item) to RGBA8, its transforms applied, deeper
/// samples rounded to 8 bits, premultiplied alpha un-premultiplied.
int wi_heif_render(wi_heif *heif, wi_image *out);
/// The same; with `keep_depth`, an image coded in more than 8 bits comes out at 16 bits a
/// channel (wi_image.deep), its coded values widened to 16 bits (their top bits repeated below).
int wi_heif_render_at(wi_heif *heif, int keep_depth, wi_image *out);
/// Copies the embedded ICC profile into a malloc'd buffer (the caller frees it); 0 when none.
size_t wi_heif_icc(const wi_heif *heif, uint8_t **bytes);
void wi_heif_close(wi_heif *heif);

/// Whether this libheif can decode HEVC-coded images (HEIC) and encode them.
int wi_heif_can_decode_hevc(void);
int wi_heif_can_encode_hevc(void);

/// Encodes one RGBA8 image as HEIC. quality 0...100; lossless where the encoder has it; preset
/// an x265 preset name ("ultrafast" ... "placebo") or NULL for the default. The EXIF block (a
/// TIFF structure) and the XMP packet, when not empty, are written as the image's metadata items.
/// `bits` is 8 for RGBA8 samples; 10 or 12 when `rgba` holds 16-bit samples, coded in that
/// many bits (anything else: WI_ERR_ARGUMENT). Without `icc`, a nonzero
/// `transfer` writes an nclx box with `primaries` and it (an HDR image's PQ or HLG).
int wi_heif_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int has_alpha, int quality, int lossless,
                   const char *preset, const uint8_t *icc, size_t icc_length, const uint8_t *exif, size_t exif_length,
                   const uint8_t *xmp, size_t xmp_length, int bits, int primaries, int transfer, wi_buffer *out);

#endif

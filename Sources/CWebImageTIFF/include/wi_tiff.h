// Plain C interface over libtiff (the WebImageTIFF plug-in). Same conventions as wi_codecs.h:
// status codes, RGBA8 straight-alpha pixels in malloc'd buffers the caller frees.
#ifndef WI_TIFF_H
#define WI_TIFF_H

#include "wi_codecs.h"

/// What the first page's directory says.
typedef struct {
    uint32_t width, height;
    uint32_t orientation;      // the TIFF Orientation tag (EXIF's values), 1 when absent
    uint32_t pages;            // directories in the file
    uint8_t *icc;              // the page's ICC profile (malloc'd, the caller frees it), or NULL
    uint32_t icc_length;
    char message[WI_MESSAGE_SIZE];
} wi_tiff_info;

/// Decodes the first page to RGBA8 as stored (every photometric, bit depth and compression
/// libtiff's RGBA interface reads; alpha un-premultiplied), refusing a page over `max_pixels`
/// (WI_ERR_TOO_LARGE) before any pixel exists. libtiff's messages go to `message`, never stderr.
int wi_tiff_decode(const uint8_t *data, size_t length, uint64_t max_pixels, wi_tiff_info *info, wi_image *out);
/// The same; with `deep`, a page of 16-bit samples (RGB, RGBA, grey, grey and alpha; in strips,
/// contiguous) comes out at 16 bits a channel (wi_image.deep); other pages as RGBA8. Pages of
/// 8-bit samples in that layout are read sample by sample either way (exact, alpha included).
int wi_tiff_decode_at(const uint8_t *data, size_t length, uint64_t max_pixels, int deep, wi_tiff_info *info, wi_image *out);

/// Writes RGBA8 (or, `deep`, native-endian RGBA16) pixels as a one-page TIFF: RGB, or RGB and
/// unassociated alpha with `has_alpha`; 8 or 16 bits a sample; Deflate with the horizontal
/// predictor; the ICC profile when given. WI_ERR_NO_MEMORY or WI_ERR_ARGUMENT with a message.
int wi_tiff_encode(const void *rgba, uint32_t width, uint32_t height, int deep, int has_alpha,
                   const uint8_t *icc, size_t icc_length, wi_buffer *out);

#endif

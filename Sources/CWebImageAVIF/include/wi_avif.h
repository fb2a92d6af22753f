// Plain C interface over libavif (the WebImageAVIF plug-in). Same conventions as wi_codecs.h:
// status codes, RGBA8 straight-alpha pixels in malloc'd buffers the caller frees.
#ifndef WI_AVIF_H
#define WI_AVIF_H

#include "wi_codecs.h"

/// What the container says about an AVIF image or image sequence.
typedef struct {
    uint32_t width;            // the displayed canvas before irot/imir: the clean aperture when clap is valid
    uint32_t height;
    uint32_t coded_width;      // the coded image (ispe)
    uint32_t coded_height;
    uint32_t frame_count;
    uint32_t depth;            // bits per sample as coded (8, 10, 12)
    int has_alpha;
    int alpha_premultiplied;
    int is_sequence;           // an image sequence (avis track)
    int rotation;              // irot: anti-clockwise quarter turns (0-3)
    int mirror;                // imir: -1 none, 0 top and bottom swapped, 1 left and right swapped
    uint16_t color_primaries;  // CICP
    uint16_t transfer_characteristics;
    uint16_t matrix_coefficients;
    int full_range;
    char message[WI_MESSAGE_SIZE];
} wi_avif_info;

typedef struct wi_avif wi_avif;

/// Parses the container (no pixel is decoded). Keeps its own copy of the data. Refuses an image
/// over `max_pixels` (WI_ERR_TOO_LARGE) from its declared size, before any plane exists.
wi_avif *wi_avif_open(const uint8_t *data, size_t length, uint64_t max_pixels, wi_avif_info *info, int *status);
/// Frame `index`'s duration in seconds (0 for a still image).
double wi_avif_frame_duration(const wi_avif *avif, uint32_t index);
/// Decodes frame `index` to RGBA8 (straight alpha, 8 bits rounded from deeper samples), with the
/// clean aperture applied; irot and imir are left to the caller.
int wi_avif_render(wi_avif *avif, uint32_t index, wi_image *out);
/// The same; with `deep`, an image coded in more than 8 bits comes out at 16 bits a channel
/// (wi_image.deep; libavif scales the coded values to 0...65535).
int wi_avif_render_at(wi_avif *avif, uint32_t index, int deep, wi_image *out);
/// The embedded ICC profile (a pointer into the decoder's state, valid until wi_avif_close), or 0.
size_t wi_avif_icc(const wi_avif *avif, const uint8_t **bytes);
void wi_avif_close(wi_avif *avif);

/// Encodes RGBA8 frames as an AVIF image (one frame) or image sequence (several).
/// quality 0...100 (100 with lossless: mathematically lossless, identity matrix, 4:4:4);
/// speed 0 (slowest) ... 10 (fastest), -1 for libavif's default.
typedef struct wi_avif_encoder wi_avif_encoder;
wi_avif_encoder *wi_avif_encoder_create(int quality, int lossless, int speed, int has_alpha);
/// Adds a frame of `duration_ms` (ignored for a single image); `single` marks a still image.
int wi_avif_encoder_add(wi_avif_encoder *encoder, const uint8_t *rgba, uint32_t width, uint32_t height,
                        uint32_t duration_ms, int single, char message[WI_MESSAGE_SIZE]);
/// The same for 16-bit samples (native-endian R, G, B, A), coded in 10 bits or as set below.
int wi_avif_encoder_add_16(wi_avif_encoder *encoder, const uint16_t *rgba, uint32_t width, uint32_t height,
                           uint32_t duration_ms, int single, char message[WI_MESSAGE_SIZE]);
/// Embeds `icc` (copied) in the frames added after this call.
int wi_avif_encoder_set_icc(wi_avif_encoder *encoder, const uint8_t *icc, size_t length);
/// The CICP primaries and transfer written in the nclx box (1 and 13, sRGB's, by default): an
/// HDR image's 9 and 16 (PQ) or 18 (HLG) keep it HDR.
int wi_avif_encoder_set_cicp(wi_avif_encoder *encoder, int primaries, int transfer);
/// The bits a sample 16-bit frames are coded in: 10 (the default; AV1's main profile) or 12
/// (its professional profile at 4:2:0).
int wi_avif_encoder_set_depth(wi_avif_encoder *encoder, int bits);
/// The EXIF block (a TIFF structure) and the XMP packet written with every image added after
/// this call (either may be empty).
int wi_avif_encoder_set_metadata(wi_avif_encoder *encoder, const uint8_t *exif, size_t exif_length,
                                 const uint8_t *xmp, size_t xmp_length);
/// Writes the file.
int wi_avif_encoder_finish(wi_avif_encoder *encoder, wi_buffer *out);
void wi_avif_encoder_destroy(wi_avif_encoder *encoder);
/// Whether this libavif can encode (an AV1 encoder was built in).
int wi_avif_can_encode(void);

#endif
